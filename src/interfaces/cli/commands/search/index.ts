/**
 * `engram search QUERY`: the hybrid search (lexical and dense, fused, with spreading activation)
 * from the command line, as the user it acts for sees it (`--user`), or the agent's own view —
 * with the sources search_memory shows. A person looking is not the agent recalling: access
 * statistics are left alone.
 */
import { join } from 'node:path'
import { checkLength } from '../../../../config/limits.ts'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { UNIT_KINDS, type UnitKind } from '../../../../storage/contracts.ts'
import { searchMemory } from '../../../../tools/agent-tools.ts'
import { formatSearchHits, hitReference, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT } from '../../../../tools/search-memory-tool.ts'
import { choicesOf } from '../../choices.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { cliUser } from '../memory/open-declarative-memory.ts'

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

function kindsOf(value: unknown): UnitKind[] | undefined {
  return value === undefined ? undefined : choicesOf<UnitKind>(value, UNIT_KINDS, 'kinds')
}

function limitOf(value: unknown): number {
  if (value === undefined) return SEARCH_DEFAULT_LIMIT
  const limit = Number(value)
  if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_MAX_LIMIT) throw invalid(`--limit expects a whole number from 1 to ${SEARCH_MAX_LIMIT}, got ${JSON.stringify(value)}.`, 'write e.g. --limit 10')
  return limit
}

/** A hit's source as a file: home-relative, or `project:.engram/memory/…` relative to the project (its memory folder's grandparent). */
function fileOf(source: string, home: string, projectMemoryDir: string | undefined): string {
  if (!source.startsWith('project:')) return join(home, source)
  return projectMemoryDir === undefined ? source : join(projectMemoryDir, '..', '..', source.slice('project:'.length))
}

export const searchCommand: Command = {
  path: ['search'],
  usage: 'QUERY [--user ID] [--kinds rule,lesson,…] [--limit N]',
  examples: ['engram search "deploy token"', 'engram search tea --user ada --kinds profile,lesson --limit 5'],
  options: {
    kinds: { type: 'string', description: `only these kinds, comma-separated (${UNIT_KINDS.join(', ')})`, valueName: 'LIST' },
    limit: { type: 'string', description: `most results, 1-${SEARCH_MAX_LIMIT} (default ${SEARCH_DEFAULT_LIMIT})`, valueName: 'N' },
  },
  async run(context) {
    const query = context.args.join(' ').trim()
    if (query === '') throw invalid('engram search needs a query.', 'write the words to look for, e.g. `engram search "deploy token"`')
    const kinds = kindsOf(context.options.kinds)
    const limit = limitOf(context.options.limit)
    const user = cliUser(context)
    return withMind(context, async (mind) => {
      checkLength('queryChars', 'The query', query, mind.config.values.limits.queryChars)
      const viewer = mind.scope(user).viewer
      const hits = await searchMemory(mind, viewer, query, { limit, recordAccess: false, ...(kinds ? { kinds } : {}) })
      return {
        data: { query, ...(user !== undefined ? { user } : {}), hits: hits.map((hit) => ({ ...hit, ref: hitReference(hit, mind.layout, viewer) })) },
        // A person at the command line opens a conversation with `engram context expand` and a
        // memory file in the home with any editor; on PostgreSQL the memory is rows, with no file
        // to name, and the full text is in --json.
        human: formatSearchHits(query, hits, mind.layout, viewer, (hit, ref) =>
          ref.startsWith('conv:') ? `engram context expand ${hit.id}` : mind.backend.capabilities.memory === 'files' ? fileOf(hit.source, mind.home, mind.layout.projectMemoryDir) : 'engram search --json',
        ),
      }
    })
  },
}
