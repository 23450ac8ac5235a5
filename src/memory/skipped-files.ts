/**
 * Memory files and lines that could not be read, told to the turn (decision 0025). The reindex
 * skips them and keeps them as they are; `engram status` and `engram doctor` list them all. A turn
 * gets one warning line with the ones it has not been told about yet, so a host that shows
 * `turn.warnings` learns that a hand edit went wrong the first time it matters, not by searching.
 *
 * A viewer is told only about its own trees (decision 0017): the agent's, the shared one, and its
 * user's — never the file names of another user's memory. Lines are named by file and line only:
 * their text, and the reasons that quote it, stay in `engram status`.
 */
import { userKey, type Viewer } from '../core/owner.ts'
import type { ParseProblem } from '../storage/contracts.ts'

/** Files named in one warning at most; the rest are counted. */
const LISTED = 5

/** Whether `file` (a home-relative index source) belongs to a tree `viewer` sees. */
function visibleTo(file: string, viewer: Viewer): boolean {
  const own = viewer.user === undefined ? undefined : userKey(viewer.user)
  const agentTree = `agents/${viewer.agent}/`
  if (file.startsWith(`${agentTree}users/`)) return own !== undefined && file.startsWith(`${agentTree}users/${own}/`)
  if (file.startsWith('shared/users/')) return own !== undefined && (file === `shared/users/${own}.md` || file.startsWith(`shared/users/${own}/`))
  if (file.startsWith('project:.engram/users/')) return own !== undefined && file.startsWith(`project:.engram/users/${own}/`)
  return file.startsWith(agentTree) || file.startsWith('shared/') || file.startsWith('project:')
}

export interface SkippedFileReports {
  /** One warning for the problems `viewer` sees and has not been told about, or none. */
  unreported(problems: readonly ParseProblem[], viewer: Viewer): string[]
}

export function createSkippedFileReports(): SkippedFileReports {
  const told = new Set<string>()
  return {
    unreported(problems, viewer) {
      const fresh: ParseProblem[] = []
      for (const problem of problems) {
        const key = `${viewer.user ?? ''}\u0000${problem.file}\u0000${problem.line}`
        if (told.has(key) || !visibleTo(problem.file, viewer)) continue
        // Bounded: a home with many broken lines must not grow this set without end.
        if (told.size >= 10_000) told.clear()
        told.add(key)
        fresh.push(problem)
      }
      if (fresh.length === 0) return []
      const named = fresh.slice(0, LISTED).map((problem) => (problem.line === 0 ? `${problem.file} (${problem.reason})` : `${problem.file} line ${problem.line}`))
      const more = fresh.length > LISTED ? `; and ${fresh.length - LISTED} more` : ''
      return [
        `engram skipped ${fresh.length} memory file${fresh.length === 1 ? '' : 's'} or line${fresh.length === 1 ? '' : 's'} it cannot read, kept as they are: ${named.join('; ')}${more}. Fix: \`engram status\` lists them with the reason; edit or remove them, they are read again on the next reindex.`,
      ]
    },
  }
}
