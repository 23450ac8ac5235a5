/**
 * Where everything lives in an engram home (DESIGN.md §3). One place computes the paths so
 * that the CLI, the backend and the docs never disagree.
 */
import { join } from 'node:path'
import { EngramError, ErrorCode } from '../core/errors.ts'

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
  /** Folders created when the home is opened. */
  requiredDirs: string[]
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
