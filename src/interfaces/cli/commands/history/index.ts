/** `engram history TARGET [--user ID]`: how a knowledge or procedure document changed, and why. */
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { DocumentHistory, FactLink } from '../../../../memory/consolidation/history.ts'
import { validityInterval } from '../../../../memory/retrieval/fact-history.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { cliUser } from '../memory/open-declarative-memory.ts'

/** One document of a fact's chain: `users/ada/knowledge/berlin.md — live; valid from 2026-05-01`. */
function chainLine(path: string, state: string, validFrom: string | undefined, validUntil: string | undefined): string {
  const interval = validityInterval(validFrom, validUntil)
  return `  ${path} — ${state}${interval !== '' ? `; valid ${interval}` : ''}`
}

/** When the fact held and the documents before and after it, oldest first (decision 0033); none for a document without a history of facts. */
function factLines(history: DocumentHistory): string[] {
  const earlier: FactLink[] = [...(history.supersedes ?? [])].reverse()
  const later: FactLink[] = history.supersededBy ?? []
  if (earlier.length === 0 && later.length === 0) {
    return history.validity ? [`valid ${validityInterval(history.validity.from, history.validity.until)}`] : []
  }
  return [
    'fact history, oldest first:',
    ...earlier.map((link) => chainLine(link.path, link.state, link.validFrom, link.validUntil)),
    chainLine(history.path, 'this document', history.validity?.from, history.validity?.until),
    ...later.map((link) => chainLine(link.path, link.state, link.validFrom, link.validUntil)),
  ]
}

/** A document's history as a person reads it: its state and lineage, its facts, its earlier versions. */
export function historyText(history: DocumentHistory): string {
  const lineage = Object.entries(history.lineage).map(([key, value]) => `${key}: ${String(value)}`)
  const lines = [`${history.path} — ${history.state}${lineage.length > 0 ? ` (${lineage.join(', ')})` : ''}`, ...factLines(history)]
  if (history.versions.length === 0) lines.push('no earlier versions')
  for (const version of history.versions) lines.push(`  ${version.at} ${version.path}${version.reason ? ` — ${version.reason}` : ''}`)
  if (history.retired) lines.push(`  and ${history.retired.length} older version(s) that version retention moved to archive/forgotten/versions/ (--json lists them)`)
  return lines.join('\n')
}

export const historyCommand: Command = {
  path: ['history'],
  usage: 'TARGET [--user ID]   (a path such as knowledge/tea.md or procedures/deploy.md)',
  examples: ['engram history knowledge/tea.md', 'engram history procedures/deploy.md --user ada'],
  async run(context) {
    const target = context.args.join(' ').trim()
    if (target === '') {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'engram history needs a document.', fix: 'name it by its path, e.g. `engram history knowledge/tea.md`' })
    }
    const user = cliUser(context)
    return withMind(context, async (mind) => {
      const history = await mind.history(target, user !== undefined ? { user } : {})
      // A document that is neither in memory nor archived and never had a version is not there:
      // said as the not-found it is (exit 3), not as an empty history (exit 0).
      if (history.state === 'missing' && history.versions.length === 0 && history.retired === undefined) {
        throw new EngramError({
          code: ErrorCode.notFound,
          category: 'user',
          message: `There is no document ${history.path}: not in memory, not forgotten, with no earlier versions.`,
          fix: 'find it with `engram search "<words it holds>" --kinds knowledge,procedure` and pass the path its source shows (e.g. knowledge/tea.md)',
          details: { path: history.path },
        })
      }
      return { data: history, human: historyText(history) }
    }, { reindexOnOpen: false })
  },
}
