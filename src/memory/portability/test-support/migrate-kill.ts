/**
 * The migrate kill run (decision 0052), shared by test/migrate-kill.test.ts and
 * `npm run bench -- robustness/migrate-kill`: an embedded home with every kind of memory a
 * migration carries and conversations with a summary DAG; `engram migrate --to postgres://…` run
 * once to the end (the reference), then again and again in child processes killed with SIGKILL
 * after a random delay drawn over the reference's duration, each followed by a rerun; each
 * recovered schema is compared with the reference row for row (the count and the contents of the
 * rows of every table, `RowContents`) and by digest (per conversation and per tree, `digestAgent`).
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { ManualClock, systemClock } from '../../../core/clock.ts'
import type { Engram } from '../../../core/engram.ts'
import { openMindInternals } from '../../../mind-internals.ts'
import { openPostgresBackend } from '../../../storage/postgres/backend.ts'
import { forEachLivePosting } from '../../../storage/postgres/index-blocks.ts'
import { multiset } from '../migrate-backend.ts'
import { type AgentDigest, digestAgent } from '../migration-digest.ts'

const BIN = fileURLToPath(new URL('../../../interfaces/cli/bin.ts', import.meta.url))

export interface MigrationHomeSize {
  /** Long conversations, each with its own DAG (default 2). */
  conversations?: number
  /** Messages of each long conversation (default 240). */
  messages?: number
}

const lesson = (text: string, extra: Partial<Engram> = {}): Engram => ({ text, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', ...extra })

/**
 * Fills `home` with what a migration carries, for four owners: rules, lessons, topics, documents,
 * a user profile, earlier versions, forgotten and merged documents, forgotten lessons and a
 * forgotten topic, access counts of the indexed memory, jobs waiting in the lifecycle's queue, confirmations waiting and answered, turns of two users (activity, stored turns
 * with replies), job runs, and long conversations whose messages are folded into leaf summaries
 * (8 messages each), those into condensed ones (4 each) and those once more — a DAG of three levels.
 */
export async function buildMigrationHome(home: string, env: Record<string, string>, size: MigrationHomeSize = {}): Promise<void> {
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await openMindInternals({ home, env, ignoreConfigFile: true, clock, embedder: null, reindexOnOpen: false })
  try {
    await mind.encode([
      { text: 'Answer in English unless asked otherwise', kind: 'always', scope: 'global', confidence: 'high', source: 'user' },
      { text: 'When a deploy fails, read the release notes first', kind: 'when', scope: 'global', confidence: 'high', source: 'user', tool: 'deploy' },
      lesson('Deploys on Fridays need a second reviewer', { topic: 'deploys' }),
      lesson('The staging deploy takes four minutes', { topic: 'deploys' }),
      lesson('Ada prefers answers in bullet points', { owner: 'user:ada', topic: 'style' }),
      lesson('Bob keeps his notes in Obsidian', { owner: 'user:bob' }),
      lesson('The team standup is at 09:30', { owner: 'shared', topic: 'team' }),
    ])
    const docs = mind.backend.documents
    await docs.write('knowledge', 'tea', { created_at: '2026-03-01T08:00:00Z', confidence: 0.9 }, '# Tea\n\nGreen tea steeps for two minutes.\n')
    await docs.write('procedure', 'release', { description: 'Cut a release', version: 2 }, '1. Tag\n2. Build\n3. Publish\n')
    await docs.append('episode', '2026-03-01', '## 10:00 Deploy\n\nThe deploy went fine.\n')
    await mind.backend.owned('user:ada').documents.write('knowledge', 'ada-projects', { confidence: 0.8 }, 'Ada works on the billing service.\n')
    await mind.backend.owned('shared').documents.write('knowledge', 'office', {}, 'The office is in Lisbon.\n')
    await docs.write('user', 'ada', { name: 'Ada' }, '# Ada\n\n- Prefers bullet points\n')
    // What forgetting, merging and rewriting keep: two earlier versions of a document (and of a profile), a forgotten and a merged document, forgotten lessons and a forgotten topic.
    for (const minutes of ['three', 'two and a half']) {
      clock.advance(60_000)
      await docs.write('knowledge', 'tea', { created_at: '2026-03-01T08:00:00Z', confidence: 0.9 }, `# Tea\n\nGreen tea steeps for ${minutes} minutes.\n`, { reason: `corrected to ${minutes} minutes` })
    }
    await docs.write('user', 'ada', { name: 'Ada' }, '# Ada\n\n- Prefers bullet points\n- Works on billing\n')
    await docs.write('knowledge', 'old-office', {}, 'The office was in Porto.\n')
    await mind.forget('knowledge/old-office.md')
    await docs.write('knowledge', 'tea-notes', {}, 'Notes on tea, merged into tea.\n')
    await docs.archive('knowledge', 'tea-notes', 'merged')
    await mind.forget('Bob keeps his notes in Obsidian', { user: 'bob' })
    await mind.forget('memory/topics/deploys.md')
    await mind.encode([lesson('Deploys need a green build', { topic: 'deploys' }), lesson('Ada reviews deploys on Mondays', { owner: 'user:ada' })])
    await mind.forget('Ada reviews deploys on Mondays', { user: 'ada' })
    // Recalls (access counts) of what the index holds, as recall counts them.
    await mind.reindex({ full: true })
    const units = await mind.backend.index.list({}, { limit: 1_000 })
    for (const [i, unit] of units.filter((u) => u.kind !== 'message' && u.kind !== 'summary').entries()) {
      for (let n = 0; n < (i % 3) + 1; n++) await mind.backend.index.recordAccess([unit.id], new Date(Date.parse('2026-03-02T12:00:00Z') + (i * 3 + n) * 60_000).toISOString())
    }
    await mind.backend.index.flush?.()
    // Work waiting in the lifecycle's queue (due long after any test), with a key and without.
    await mind.backend.lifecycle.enqueue({ agent: 'default', kind: 'sleep-replay', key: 'migrate-test:waiting', payload: { day: '2026-03-02' }, runAfter: '2099-01-01T00:00:00.000Z' })
    await mind.backend.lifecycle.enqueue({ agent: 'default', kind: 'identity', payload: { reason: 'waiting, without a key' }, runAfter: '2099-01-01T00:00:00.000Z' })
    const confirmations = mind.backend.confirmations
    await confirmations.enqueue(lesson('Ada owns the billing runbook', { owner: 'user:ada', confidence: 'medium', source: 'llm' }), 'copilot mode: confidence medium', 'ada')
    for (const [i, user] of ['ada', 'bob'].entries()) {
      const accepted = await confirmations.enqueue(lesson(`${user} asked to remember fact ${i}`, { owner: `user:${user}`, confidence: 'medium', source: 'llm' }), 'copilot mode', user)
      await confirmations.accept([accepted.id], user)
      const rejected = await confirmations.enqueue(lesson(`${user} dislikes tea ${i}`, { owner: `user:${user}`, confidence: 'low', source: 'llm' }), 'copilot mode', user)
      await confirmations.reject([rejected.id], user)
    }
    for (const user of ['ada', 'bob']) {
      for (let t = 0; t < 3; t++) {
        const session = mind.session(`chat-${user}`, { user })
        const turn = await session.begin(`Question ${t} of ${user}: where is the coffee machine?`)
        await session.end(turn, `Answer ${t}: on floor ${t + 2}.`)
        clock.advance(60_000)
      }
    }
    await mind.idle()
    for (let i = 0; i < 5; i++) {
      await mind.backend.jobs.record({ job: i % 2 === 0 ? 'daily' : 'weekly', agent: 'default', startedAt: `2026-03-0${i + 1}T03:00:00.000Z`, finishedAt: `2026-03-0${i + 1}T03:00:05.000Z`, status: 'ok', details: { n: i } })
    }

    const context = mind.backend.context
    for (let c = 0; c < (size.conversations ?? 2); c++) {
      const conversation = await context.conversation(`long-${c}`, { agent: 'default', ...(c % 2 === 0 ? { user: 'ada' } : {}) })
      const count = size.messages ?? 240
      await context.appendMessages(
        conversation.id,
        Array.from({ length: count }, (_, i) => ({
          role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
          content: `Conversation ${c}, message ${i}: ${i % 2 === 0 ? 'what did we decide about release' : 'we decided to ship on'} ${i}.`,
          at: new Date(Date.parse('2026-03-02T10:00:00Z') + i * 60_000).toISOString(),
          tokenCount: 12 + (i % 7),
        })),
      )
      // Fold the window level by level, oldest first, as compaction does.
      for (const [depth, group] of [
        [0, 8],
        [1, 4],
        [2, 4],
      ] as const) {
        for (;;) {
          const items = await context.items(conversation.id)
          const wanted = depth === 0 ? 'message' : 'summary'
          const run: typeof items = []
          for (const item of items) {
            const fits = item.kind === wanted && (item.kind === 'message' || (await context.summary(item.summaryId))?.depth === depth - 1)
            if (fits) run.push(item)
            else if (run.length > 0) break
            if (run.length === group) break
          }
          if (run.length < group) break
          const messages = await context.messagesById(run.flatMap((item) => (item.kind === 'message' ? [item.messageId] : [])))
          const summaries = await context.summariesById(run.flatMap((item) => (item.kind === 'summary' ? [item.summaryId] : [])))
          const at = [...messages.map((m) => m.at), ...summaries.flatMap((s) => [s.earliestAt, s.latestAt])].sort()
          clock.advance(1_000)
          await context.replaceWithSummary(
            conversation.id,
            run.map((item) => item.position),
            {
              kind: depth === 0 ? 'leaf' : 'condensed',
              depth,
              content: `Summary at depth ${depth} of ${at[0]}..${at[at.length - 1]} in conversation ${c}.`,
              tokenCount: 20,
              sourceTokenCount: 100,
              earliestAt: at[0] as string,
              latestAt: at[at.length - 1] as string,
              method: 'deterministic',
              ...(depth === 0 ? { messageIds: messages.map((m) => m.id) } : { parentIds: summaries.map((s) => s.id) }),
            },
          )
        }
      }
    }
  } finally {
    await mind.close()
  }
}

export interface MigrateRun {
  code: number | null
  signal: NodeJS.Signals | null
  ms: number
  /** The JSON envelope `engram migrate --json` printed (absent when it was killed). */
  json?: { ok: boolean; data?: { status?: string; agents?: Array<{ status: string; verification: { differences: unknown[] }; problems: unknown[] }> } }
  stderr: string
}

/** `engram migrate --to URL` in a child process (the schema by ENGRAM_DATABASE_SCHEMA); SIGKILL after `killAfterMs` when given. */
export function runMigrate(home: string, env: Record<string, string>, url: string, schema: string, killAfterMs?: number): Promise<MigrateRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [BIN, 'migrate', '--to', url, '--home', home, '--json'], {
      env: { ...env, ENGRAM_DATABASE_SCHEMA: schema, ENGRAM_LLM_PROVIDER: 'none' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const last = stdout.trim().split('\n').pop() ?? ''
      let json: MigrateRun['json']
      try {
        json = last === '' ? undefined : JSON.parse(last)
      } catch {
        json = undefined
      }
      resolve({ code, signal, ms: performance.now() - started, ...(json ? { json } : {}), stderr: stderr.slice(-4000) })
    })
  })
}

/** A schema name of the kill run (dropped at the end). */
export function killRunSchema(prefix = 'test'): string {
  return `${prefix}_mk_${randomBytes(5).toString('hex')}`
}

export interface ReferenceRun {
  run: MigrateRun
  /** When the target's schema appeared (the child opened the target), ms after the start. */
  openedAtMs: number
  rows: Record<string, number>
  digest: AgentDigest
  /** Every row of every table, without the columns no two runs agree on (`RowContents`). */
  contents: RowContents
}

/**
 * The rows of a schema as a multiset per table, each row its JSON without the columns that say
 * when or under which number it was written: the columns two unkilled runs into fresh schemas
 * fill differently (times the target stamps, random summary ids), and every bigint id and
 * reference to one (`id`, `rowid`, `*_id`) — a killed run uses up identity values, so a rerun
 * numbers its rows otherwise while holding the same ones. What links rows by those ids (a
 * summary's messages, a conversation's items) is compared by the digest instead.
 */
export interface RowContents {
  /** Per table, the columns left out. */
  ignored: Record<string, string[]>
  /** Per table, each row's JSON (without the ignored columns) and how many times it is there. */
  rows: Record<string, Map<string, number>>
}

type TableDump = Record<string, { columns: Array<{ name: string; type: string }>; rows: Array<Record<string, unknown>> }>

/** Every row of every table of `schema`, with each table's columns and their types. */
async function dumpTables(url: string, schema: string): Promise<TableDump> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows: columns } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE c.table_schema = $1 AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position`,
      [schema],
    )
    const dump: TableDump = {}
    for (const column of columns) {
      const table = dump[column.table_name] ?? { columns: [], rows: [] }
      table.columns.push({ name: column.column_name, type: column.data_type })
      dump[column.table_name] = table
    }
    for (const table of Object.keys(dump)) {
      const result = await client.query<{ row: Record<string, unknown> }>(`SELECT to_jsonb(t) AS row FROM "${schema}"."${table}" t`)
      ;(dump[table] as TableDump[string]).rows = result.rows.map((row) => row.row)
    }
    return logicalIndex(dump)
  } finally {
    await client.end()
  }
}

/**
 * The search index as what it holds rather than how it is laid out: its postings out of their
 * blocks (without their rowids, an id), and the statistics rows (one per writing transaction) as
 * their sum, tombstones subtracted and the kinds' stamps left out. How postings fall into blocks,
 * how many statistics rows there are and what the stamps count depend on how the writes were split,
 * which a kill changes.
 */
function logicalIndex(dump: TableDump): TableDump {
  const blocks = dump.index_blocks
  if (blocks) {
    delete dump.index_blocks
    const rows: Array<Record<string, unknown>> = []
    const read = blocks.rows.map((block) => ({
      term: String(block.term),
      first: Number(block.first),
      units: Number(block.units),
      data: Buffer.from(String(block.data).slice(2), 'hex'),
    }))
    // Tombstones subtracted: which postings a rewrite left as tombstones depends on what was locked.
    forEachLivePosting(read, (term, p) => rows.push({ term, own: p.own, near: p.near, far: p.far, related: p.related, token_count: p.tokens, kind: p.kind }))
    const columns = ['term', 'own', 'near', 'far', 'related', 'token_count', 'kind'].map((name) => ({ name, type: name === 'term' ? 'text' : 'integer' }))
    dump.index_postings = { columns, rows }
  }
  // The kinds' stamps count writing transactions, which a kill splits differently.
  delete dump.index_stamps
  const stats = dump.index_stats
  if (stats) {
    const sum = (column: string): number => stats.rows.reduce((total, row) => total + Number(row[column] ?? 0), 0)
    stats.rows = [{ units: sum('units'), tokens: sum('tokens'), vectors: sum('vectors') }]
  }
  return dump
}

/** Each column's values of `table` in `dump`, as one sorted list (to tell whether two runs filled it alike). */
const columnValues = (dump: TableDump, table: string, column: string): string => JSON.stringify((dump[table]?.rows ?? []).map((row) => JSON.stringify(row[column] ?? null)).sort())

/** The columns of each table left out of the comparison: ids, and what `first` and `second` (two unkilled runs) fill differently. */
function ignoredColumns(first: TableDump, second: TableDump): Record<string, string[]> {
  const ignored: Record<string, string[]> = {}
  for (const [table, { columns }] of Object.entries(first)) {
    ignored[table] = columns
      .filter(({ name, type }) => (type === 'bigint' && (name === 'id' || name === 'rowid' || name.endsWith('_id'))) || columnValues(first, table, name) !== columnValues(second, table, name))
      .map(({ name }) => name)
  }
  return ignored
}

function contentsOf(dump: TableDump, ignored: Record<string, string[]>): RowContents['rows'] {
  const rows: RowContents['rows'] = {}
  for (const [table, { rows: tableRows }] of Object.entries(dump)) {
    const left = new Set(ignored[table] ?? [])
    rows[table] = multiset(tableRows.map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([column]) => !left.has(column))))))
  }
  return rows
}

/** Rows of `actual` not in `expected` and the reverse, per table: at most three shown of each. */
function rowDifferences(actual: RowContents['rows'], expected: RowContents['rows']): string[] {
  const differences: string[] = []
  for (const table of new Set([...Object.keys(actual), ...Object.keys(expected)])) {
    const extra = (from: Map<string, number> | undefined, minus: Map<string, number> | undefined): string[] =>
      [...(from ?? new Map<string, number>())].flatMap(([row, count]) => Array<string>(Math.max(0, count - (minus?.get(row) ?? 0))).fill(row))
    const more = extra(actual[table], expected[table])
    const fewer = extra(expected[table], actual[table])
    if (more.length > 0) differences.push(`${table}: ${more.length} row(s) the unkilled run does not hold, e.g. ${more.slice(0, 3).map((row) => row.slice(0, 300)).join(' | ')}`)
    if (fewer.length > 0) differences.push(`${table}: ${fewer.length} row(s) of the unkilled run missing, e.g. ${fewer.slice(0, 3).map((row) => row.slice(0, 300)).join(' | ')}`)
  }
  return differences
}

/**
 * The unkilled run: migrate to the end, watching for the moment the target's schema appears
 * (everything before it is the process starting and reading the home, where a kill leaves
 * nothing), then the rows and digest it ends with. The schema is dropped.
 */
export async function referenceRun(home: string, env: Record<string, string>, url: string, prefix = 'test'): Promise<ReferenceRun> {
  const schema = killRunSchema(prefix)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const started = performance.now()
    const running = runMigrate(home, env, url, schema)
    let openedAtMs = Number.NaN
    let done = false
    void running.then(() => (done = true))
    while (!done && Number.isNaN(openedAtMs)) {
      const { rows } = await client.query<{ present: boolean }>(`SELECT to_regclass(format('%I.schema_migrations', $1::text)) IS NOT NULL AS present`, [schema])
      if (rows[0]?.present) openedAtMs = performance.now() - started
      else await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const run = await running
    if (run.code !== 0) throw new Error(`the unkilled migrate failed (exit ${run.code}): ${JSON.stringify(run.json)} ${run.stderr}`)
    const dump = await dumpTables(url, schema)
    // A second unkilled run into another fresh schema tells which columns no two runs fill alike.
    const twin = killRunSchema(prefix)
    try {
      const again = await runMigrate(home, env, url, twin)
      if (again.code !== 0) throw new Error(`the second unkilled migrate failed (exit ${again.code}): ${JSON.stringify(again.json)} ${again.stderr}`)
      const ignored = ignoredColumns(dump, await dumpTables(url, twin))
      const contents = { ignored, rows: contentsOf(dump, ignored) }
      return { run, openedAtMs: Number.isNaN(openedAtMs) ? 0 : openedAtMs, rows: await rowCounts(url, schema), digest: await schemaDigest(url, schema), contents }
    } finally {
      await dropKillRunSchema(url, twin)
    }
  } finally {
    await client.end()
    await dropKillRunSchema(url, schema)
  }
}

/** The rows of each table of `schema` (a missing schema: none). */
export async function rowCounts(url: string, schema: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`, [schema])
    const counts: Record<string, number> = {}
    for (const { table_name: table } of rows) {
      const result = await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${schema}"."${table}"`)
      counts[table] = Number(result.rows[0]?.n ?? 0)
    }
    return counts
  } finally {
    await client.end()
  }
}

/** The digest of the default agent's memory in `schema`. */
export async function schemaDigest(url: string, schema: string): Promise<AgentDigest> {
  const backend = await openPostgresBackend({ url, schema, agent: 'default', clock: systemClock })
  try {
    return await digestAgent(backend, 'default')
  } finally {
    await backend.close()
  }
}

export async function dropKillRunSchema(url: string, schema: string): Promise<void> {
  if (!/^[a-z]+_mk_[0-9a-f]+$/.test(schema)) throw new Error(`not a kill-run schema: ${schema}`)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}

/** The seeded generator kill points are drawn with, so a run's kill points can be drawn again. */
export { seededRandom } from '../../../test-support/seeded-random.ts'

/** Where a kill left the target, by its rows against the reference's. */
export type KillLanding = 'before any row' | 'mid-run' | 'every row there'

export function landingOf(killed: Record<string, number>, reference: Record<string, number>): KillLanding {
  const total = Object.values(killed).reduce((a, b) => a + b, 0)
  const tables = Object.keys(reference).filter((table) => (reference[table] ?? 0) > 0 && table !== 'schema_migrations')
  if (tables.every((table) => (killed[table] ?? 0) === 0) || total === 0) return 'before any row'
  return tables.every((table) => killed[table] === reference[table]) ? 'every row there' : 'mid-run'
}

export interface KillTrial {
  delayMs: number
  /** What the killed run did: killed (SIGKILL landed) or ended before the kill. */
  killed: boolean
  landing: KillLanding
  /** Rows of the messages and summaries tables the kill left, against the reference. */
  left: { messages: number; summaries: number }
  rerun: MigrateRun
  /** Tables whose row counts or rows (`RowContents`) differ from the reference's after the rerun. */
  rowsDiffer: string[]
  digestSame: boolean
}

/** One trial: a fresh schema, migrate killed after `delayMs`, the rerun, the comparison; the schema is dropped. */
export async function killTrial(
  home: string,
  env: Record<string, string>,
  url: string,
  reference: { rows: Record<string, number>; digest: AgentDigest; contents: RowContents },
  delayMs: number,
  prefix = 'test',
): Promise<KillTrial> {
  const schema = killRunSchema(prefix)
  try {
    const first = await runMigrate(home, env, url, schema, delayMs)
    const afterKill = await rowCounts(url, schema)
    const rerun = await runMigrate(home, env, url, schema)
    const rows = await rowCounts(url, schema)
    const rowsDiffer = [
      ...[...new Set([...Object.keys(rows), ...Object.keys(reference.rows)])].filter((table) => rows[table] !== reference.rows[table]).map((table) => `${table}: ${rows[table] ?? 0} rows, reference ${reference.rows[table] ?? 0}`),
      ...rowDifferences(contentsOf(await dumpTables(url, schema), reference.contents.ignored), reference.contents.rows),
    ]
    const digest = await schemaDigest(url, schema)
    return {
      delayMs,
      killed: first.signal === 'SIGKILL',
      landing: landingOf(afterKill, reference.rows),
      left: { messages: afterKill.ctx_messages ?? 0, summaries: afterKill.ctx_summaries ?? 0 },
      rerun,
      rowsDiffer,
      digestSame: JSON.stringify(digest) === JSON.stringify(reference.digest),
    }
  } finally {
    await dropKillRunSchema(url, schema)
  }
}
