/**
 * Where one user's files are in a home (decision 0017: owners are folders), for their export and
 * erasure (decision 0023): their tree under every agent (`agents/<a>/users/<key>/`), their tree of
 * the open project (`<project>/.engram/users/<key>/`), the journals whose start line names them,
 * and their lines of `shared/resolutions.jsonl`. Their profile is a document (`shared/users/`),
 * found through the DocumentStore.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { userKey } from '../../core/owner.ts'
import type { HomeLayout } from '../../storage/home-layout.ts'
import { LEGACY_JOURNAL_FILE, RECOVERED_DIR, RECOVERING_DIR, STREAMS_DIR } from '../journal/journal-folder.ts'
import { parseJournalLine } from '../journal/journal-events.ts'
import type { ResolutionRecord } from '../episodes/resolutions.ts'

/** A journal's first line is its start line; it is small, so only this much of a file is read. */
const START_LINE_LIMIT = 64 * 1024

export interface UserFiles {
  user: string
  /** The user's file-name key (`userKey`). */
  key: string
  /** Every agent of the home. */
  agents: string[]
  /** The user's trees that exist, one per agent that has one. */
  trees: Array<{ agent: string; dir: string; rel: string }>
  /** Their tree of the open project, when there is one and it exists. */
  projectTree: string | undefined
  /** Journals (streams, recovering, recovered, the legacy file) whose start line names the user. */
  journals: Array<{ agent: string; path: string; rel: string }>
}

function folders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort()
  } catch {
    return []
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** The `from` of a journal's start line, when it has one. */
function journalSender(path: string): string | undefined {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const buffer = Buffer.alloc(START_LINE_LIMIT)
    const length = readSync(fd, buffer, 0, START_LINE_LIMIT, 0)
    const text = buffer.subarray(0, length).toString('utf8')
    const end = text.indexOf('\n')
    const event = parseJournalLine(end < 0 ? text : text.slice(0, end))
    return event?.type === 'start' ? event.from : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Finds the files of `user` in the home of `layout` (every agent), and of its open project. */
export function findUserFiles(layout: HomeLayout, user: string): UserFiles {
  const key = userKey(user)
  const agents = folders(join(layout.home, 'agents'))
  const trees: UserFiles['trees'] = []
  const journals: UserFiles['journals'] = []
  for (const agent of agents) {
    const rel = `agents/${agent}/users/${key}`
    const dir = join(layout.home, 'agents', agent, 'users', key)
    if (isFolder(dir)) trees.push({ agent, dir, rel })
    const journalDir = join(layout.home, 'agents', agent, 'journal')
    const candidates = [LEGACY_JOURNAL_FILE, ...[STREAMS_DIR, RECOVERING_DIR, RECOVERED_DIR].flatMap((sub) => {
      try {
        return readdirSync(join(journalDir, sub)).filter((name) => name.endsWith('.jsonl')).sort().map((name) => `${sub}/${name}`)
      } catch {
        return []
      }
    })]
    for (const name of candidates) {
      const path = join(journalDir, ...name.split('/'))
      if (journalSender(path) === user) journals.push({ agent, path, rel: `agents/${agent}/journal/${name}` })
    }
  }
  const projectDir = layout.projectMemoryDir ? join(layout.projectMemoryDir, '..', 'users', key) : undefined
  return { user, key, agents, trees, projectTree: projectDir !== undefined && isFolder(projectDir) ? projectDir : undefined, journals }
}

/** Whether a line of `shared/resolutions.jsonl` is the user's (lines that cannot be read are nobody's). */
export function isResolutionOf(line: string, user: string): boolean {
  try {
    return (JSON.parse(line) as Partial<ResolutionRecord>).user === user
  } catch {
    return false
  }
}

/** Every file under a folder, relative to it, with `/`. */
export function filesUnder(dir: string, prefix = ''): string[] {
  let entries: import('node:fs').Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return []
  }
  const out: string[] = []
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`
    if (entry.isDirectory()) out.push(...filesUnder(join(dir, entry.name), rel))
    else out.push(rel)
  }
  return out
}
