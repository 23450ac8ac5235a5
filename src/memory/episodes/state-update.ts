/**
 * The automatic state update of immediate encoding (AnimaWorks): what a session resolved is ticked
 * off in `state/current_task.md`, and the tasks it left open are added. The file stays a human
 * markdown checklist — hand-written lines are never removed or reordered; a resolved task is
 * marked `- [x] … (resolved <date>)` so the history stays readable, and the document store keeps
 * the previous version under `archive/versions/`.
 */
import type { DocumentStore, Locks } from '../../storage/contracts.ts'

export const CURRENT_TASK_SLUG = 'current_task'

export type StateUpdateOutcome =
  | { kind: 'updated'; path: string; resolved: string[]; added: string[]; unmatched: string[] }
  | { kind: 'unchanged'; reason: string; unmatched: string[] }
  | { kind: 'skipped'; reason: string }

const OPEN_ITEM = /^(\s*[-*]\s+)(?:\[ \]\s+)?(?!\[[xX]\])(.+?)\s*$/
const ANY_ITEM = /^\s*[-*]\s+(?:\[[ xX]\]\s+)?(.+?)\s*$/

const STOP = new Set(['the', 'a', 'an', 'to', 'of', 'and', 'or', 'in', 'on', 'for', 'with', 'is', 'are', 'was', 'be', 'it', 'that', 'this'])

function words(text: string): Set<string> {
  const found = text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? []
  return new Set(found.filter((word) => !STOP.has(word)))
}

/** How much of the smaller phrase the other one covers (0..1). */
export function phraseOverlap(a: string, b: string): number {
  const left = words(a)
  const right = words(b)
  if (left.size === 0 || right.size === 0) return 0
  let shared = 0
  for (const word of left) if (right.has(word)) shared++
  return shared / Math.min(left.size, right.size)
}

const SAME_TASK = 0.6
const DUPLICATE_TASK = 0.8

/**
 * Applies `resolved` and `tasks` to `state/current_task.md` under a lock. Resolved items that
 * match no open line are returned as `unmatched` (they are still propagated as resolutions).
 */
export async function updateCurrentTask(
  documents: DocumentStore,
  locks: Locks,
  options: { agent: string; day: string; resolved: string[]; tasks: string[]; reason: string },
): Promise<StateUpdateOutcome> {
  if (options.resolved.length === 0 && options.tasks.length === 0) return { kind: 'unchanged', reason: 'nothing resolved and no new tasks', unmatched: [] }
  const outcome = await locks.withLock(`state-update:${options.agent}`, async (): Promise<StateUpdateOutcome> => {
    const doc = await documents.read('state', CURRENT_TASK_SLUG)
    const lines = doc ? doc.body.split('\n') : ['# Current task', '']
    const resolvedDone: string[] = []
    const unmatched: string[] = []
    for (const item of options.resolved) {
      let best = -1
      let bestScore = 0
      lines.forEach((line, index) => {
        const open = OPEN_ITEM.exec(line)
        if (!open?.[2]) return
        const score = phraseOverlap(open[2], item)
        if (score > bestScore) {
          best = index
          bestScore = score
        }
      })
      const match = best >= 0 ? OPEN_ITEM.exec(lines[best] ?? '') : null
      if (match?.[1] && match[2] && bestScore >= SAME_TASK) {
        lines[best] = `${match[1]}[x] ${match[2]} (resolved ${options.day})`
        resolvedDone.push(match[2])
      } else {
        unmatched.push(item)
      }
    }
    const added: string[] = []
    for (const task of options.tasks) {
      const known = lines.some((line) => {
        const existing = ANY_ITEM.exec(line)?.[1]
        return existing !== undefined && phraseOverlap(existing, task) >= DUPLICATE_TASK
      })
      if (known) continue
      while (lines.length > 0 && lines[lines.length - 1]?.trim() === '') lines.pop()
      lines.push(`- [ ] ${task.replace(/\s+/g, ' ').trim()}`)
      added.push(task)
    }
    if (resolvedDone.length === 0 && added.length === 0) return { kind: 'unchanged', reason: 'every task was already known and no open task matched', unmatched }
    const body = `${lines.join('\n').replace(/\n+$/, '')}\n`
    const written = await documents.write('state', CURRENT_TASK_SLUG, doc?.frontmatter ?? {}, body, { reason: options.reason })
    return { kind: 'updated', path: written.path, resolved: resolvedDone, added, unmatched }
  })
  if (outcome.kind === 'done') return outcome.value
  return { kind: 'skipped', reason: 'state/current_task.md is being updated by another process' }
}
