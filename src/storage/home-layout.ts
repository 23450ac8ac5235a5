/**
 * Where everything lives in an engram home (DESIGN.md §3). One place computes the paths so
 * that the CLI, the backend and the docs never disagree.
 */
import { join } from 'node:path'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { type Owner, userKey, userOfOwner } from '../core/owner.ts'

export interface HomeLayout {
  home: string
  agent: string
  database: string
  configFile: string
  locksDir: string
  sharedUsersDir: string
  resolutionsFile: string
  agentDir: string
  globalMemoryDir: string
  knowledgeDir: string
  proceduresDir: string
  skillsDir: string
  episodesDir: string
  activityDir: string
  stateDir: string
  journalDir: string
  archiveDir: string
  /** `<project>/.engram/memory`, when a project is open. */
  projectMemoryDir: string | undefined
  /** `agents/<agent>/users`: one folder per user of this agent (decision 0017). */
  usersDir: string
  /** `shared/`: memory every agent of the home shares. */
  sharedDir: string
  /** Folders created when the home is opened. */
  requiredDirs: string[]
}

/**
 * One owner's tree (decision 0017): the agent's folder, a user's folder inside it, or `shared/`.
 * Every tree has the same layout, so a store opened on one cannot see another's files.
 */
export interface OwnerTree {
  owner: Owner
  /** The tree's folder, absolute. */
  dir: string
  /** The tree's folder relative to the home, with `/` (`agents/a`, `agents/a/users/ada`, `shared`). */
  rel: string
  /** Where the tree appears in the agent's memory namespace: `''`, `users/<key>/` or `shared/`. */
  namespace: string
  memoryDir: string
  knowledgeDir: string
  proceduresDir: string
  episodesDir: string
  activityDir: string
  stateDir: string
  archiveDir: string
  /** The project-scope memory folder of this owner, when a project is open. */
  projectMemoryDir: string | undefined
}

/** Where an owner's tree appears in the agent's memory namespace (decision 0017; memory/tree/memory-paths.ts). */
export function ownerNamespace(owner: Owner): string {
  const user = userOfOwner(owner)
  return owner === 'shared' ? 'shared/' : user === undefined ? '' : `users/${userKey(user)}/`
}

/** The tree of `owner` in a layout. */
export function ownerTree(layout: HomeLayout, owner: Owner): OwnerTree {
  const user = userOfOwner(owner)
  const rel = owner === 'shared' ? 'shared' : user === undefined ? `agents/${layout.agent}` : `agents/${layout.agent}/users/${userKey(user)}`
  const dir = join(layout.home, ...rel.split('/'))
  const projectRoot = layout.projectMemoryDir ? join(layout.projectMemoryDir, '..') : undefined
  return {
    owner,
    dir,
    rel,
    namespace: ownerNamespace(owner),
    memoryDir: join(dir, 'memory'),
    knowledgeDir: join(dir, 'knowledge'),
    proceduresDir: join(dir, 'procedures'),
    episodesDir: join(dir, 'episodes'),
    activityDir: join(dir, 'activity'),
    stateDir: join(dir, 'state'),
    archiveDir: join(dir, 'archive'),
    // A project's memory is the agent's (anyone who opens the project reads it), except what a
    // user owns; shared memory is home-wide and has no project part.
    projectMemoryDir:
      projectRoot === undefined || owner === 'shared' ? undefined : user === undefined ? layout.projectMemoryDir : join(projectRoot, 'users', userKey(user), 'memory'),
  }
}

const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** Paths of an agent's memory in a home. Throws `invalid_argument` for an unsafe agent name. */
export function homeLayout(home: string, agent: string, project?: string): HomeLayout {
  if (!AGENT_NAME.test(agent) || agent.includes('..')) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `"${agent}" is not a valid agent name`,
      fix: 'use letters, digits, ".", "_" or "-" (at most 64 characters), with --agent or ENGRAM_AGENT',
    })
  }
  const agentDir = join(home, 'agents', agent)
  const layout: HomeLayout = {
    home,
    agent,
    database: join(home, 'engram.db'),
    configFile: join(home, 'config.json'),
    locksDir: join(home, '.locks'),
    sharedUsersDir: join(home, 'shared', 'users'),
    resolutionsFile: join(home, 'shared', 'resolutions.jsonl'),
    agentDir,
    globalMemoryDir: join(agentDir, 'memory'),
    knowledgeDir: join(agentDir, 'knowledge'),
    proceduresDir: join(agentDir, 'procedures'),
    skillsDir: join(agentDir, 'skills'),
    episodesDir: join(agentDir, 'episodes'),
    activityDir: join(agentDir, 'activity'),
    stateDir: join(agentDir, 'state'),
    journalDir: join(agentDir, 'journal'),
    archiveDir: join(agentDir, 'archive'),
    projectMemoryDir: project ? join(project, '.engram', 'memory') : undefined,
    usersDir: join(agentDir, 'users'),
    sharedDir: join(home, 'shared'),
    requiredDirs: [],
  }
  layout.requiredDirs = [
    layout.locksDir,
    layout.sharedUsersDir,
    layout.globalMemoryDir,
    layout.knowledgeDir,
    layout.proceduresDir,
    layout.skillsDir,
    layout.episodesDir,
    layout.activityDir,
    layout.stateDir,
    layout.journalDir,
    layout.archiveDir,
  ]
  return layout
}
