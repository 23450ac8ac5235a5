/**
 * Who owns what in a home, for `engram status` (decision 0024): index units and memory files per
 * owner as one agent sees the home — its own tree, the shared one, and each of its users' (their
 * tree under the agent and their profile in `shared/users/`).
 */
import { type Dirent, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { memoryKinds } from '../core/memory-kinds.ts'
import { userFromKey, userKey } from '../core/owner.ts'
import { type HomeLayout, ownerTree } from './home-layout.ts'
import type { OwnersMigrationReport } from './owners-migration.ts'
import type { SqliteHandle } from './sqlite/database.ts'

export interface OwnerCounts {
  /** Rows of the search index. */
  units: number
  /** Memory files: rules, lessons, topics, knowledge, procedures, episodes, activity days, state (and a user's profile). */
  files: number
}

export interface OwnersStatus {
  agent: OwnerCounts
  shared: OwnerCounts
  users: OwnerCounts & {
    count: number
    /** Each user, by id; the first `USERS_LISTED` only (`count` has them all). */
    list: Array<OwnerCounts & { user: string }>
  }
  /** What the migration of a home written before owners assigned; null until it ran. */
  migration: OwnersMigrationReport | null
}

/** Users listed one by one at most: a home serving thousands of users keeps its status readable. */
const USERS_LISTED = 100

/*
 * What a person reads in an owner's tree (archives, journals and skills are not counted): its
 * engram files, activity, and the folder of every document kind filed in a tree (core/memory-kinds.ts).
 */
const MEMORY_FOLDERS = ['memory', 'activity', ...memoryKinds().flatMap(([, spec]) => (spec.home === 'tree' ? [spec.folder] : []))]

function countFiles(dir: string): number {
  let entries: Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return 0
  }
  let n = 0
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue
    if (entry.isDirectory()) n += countFiles(join(dir, entry.name))
    else if (/\.(md|jsonl)$/.test(entry.name)) n++
  }
  return n
}

function treeFiles(dir: string): number {
  return MEMORY_FOLDERS.reduce((sum, folder) => sum + countFiles(join(dir, folder)), 0)
}

function namesIn(dir: string, directories: boolean): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() === directories)
      .map((entry) => entry.name)
  } catch {
    return []
  }
}

export function ownerCounts(handle: SqliteHandle, layout: HomeLayout, migration: OwnersMigrationReport | undefined): OwnersStatus {
  const units = new Map<string, number>()
  const rows = handle.db.prepare('SELECT owner, count(*) AS n FROM index_units WHERE agent = ? OR agent IS NULL GROUP BY owner').all(layout.agent) as Array<{ owner: string; n: number }>
  for (const row of rows) units.set(row.owner, row.n)

  const profiles = new Set(namesIn(layout.sharedUsersDir, false))
  const users = new Set<string>()
  for (const owner of units.keys()) if (owner.startsWith('user:')) users.add(owner.slice(5))
  for (const key of namesIn(layout.usersDir, true)) {
    const user = userFromKey(key)
    if (user !== undefined) users.add(user)
  }
  for (const file of profiles) {
    const user = file.endsWith('.md') ? userFromKey(file.slice(0, -3)) : undefined
    if (user !== undefined) users.add(user)
  }

  const list = [...users].sort().map((user) => {
    const profile = profiles.has(`${userKey(user)}.md`) ? 1 : 0
    return { user, units: units.get(`user:${user}`) ?? 0, files: treeFiles(ownerTree(layout, `user:${user}`).dir) + profile }
  })
  const sharedFiles = treeFiles(layout.sharedDir) + (namesIn(layout.sharedDir, false).includes('resolutions.jsonl') ? 1 : 0)
  return {
    agent: { units: units.get('agent') ?? 0, files: treeFiles(layout.agentDir) },
    shared: { units: units.get('shared') ?? 0, files: sharedFiles },
    users: {
      count: list.length,
      units: list.reduce((sum, entry) => sum + entry.units, 0),
      files: list.reduce((sum, entry) => sum + entry.files, 0),
      list: list.slice(0, USERS_LISTED),
    },
    migration: migration ?? null,
  }
}
