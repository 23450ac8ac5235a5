/**
 * Part 1 of the lossless-context benchmark (context.ts): what `context.append` costs, beside SQLite's
 * own full-text insert of the same text in the same run (issue 33: "ingest close to the storage
 * engine"). Every figure is messages per second of wall time and per CPU-second of this process
 * (user + system): the machine is shared, and CPU is what one append costs whatever the load.
 *
 * - single-message appends (a turn of one message: stored, indexed, its two predecessors indexed
 *   again with their new neighbour), beside plain FTS5 inserts of the same texts, one transaction
 *   per message;
 * - appends in batches of 100, beside plain FTS5 inserts of the same texts, 100 per transaction;
 * - the split, on conversations of their own: the store alone (the messages with their token counts,
 *   no index), and the index write alone (`index.upsert` of the units an append writes: analysis,
 *   the unit rows, the FTS5 rows);
 * - the index form, as a measurement only: the FTS5 rows one single-message append writes (its row,
 *   and the two before it rewritten with their new neighbour), and FTS5 rows of engram's analysed
 *   fields (own text, near and far neighbours, related words, kind) beside the same rows without
 *   the related words, in batches of 100 — all already analysed: the floor the form sets, and what
 *   a smaller form would save on the write.
 *
 * The plain baseline is a table of its own in a file of its own (`fts5(content)`, WAL, synchronous
 * NORMAL, as engram's file), so it pays its own commits and checkpoints as engram does.
 */
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Clock } from '../../src/core/clock.ts'
import type { MessageInput, StoredMessage } from '../../src/core/message.ts'
import { countTokens } from '../../src/core/tokens.ts'
import { messageUnitsWithNeighbours } from '../../src/memory/context/context-index.ts'
import type { ContextProvider, ContextSession } from '../../src/memory/context/provider.ts'
import type { Backend, Conversation } from '../../src/storage/contracts.ts'
import { ftsFields } from '../../src/storage/lexical-plan.ts'

export interface IngestOptions {
  backend: Backend
  provider: ContextProvider
  clock: Clock & { advance(ms: number): void }
  /** A directory for the plain FTS5 files. */
  dir: string
  message: () => MessageInput
  /** Single-message appends timed. */
  singles: number
  /** Batches of 100 timed. */
  batches: number
}

// A full collection before each timed stretch: the garbage of one path (or of the untimed work
// between them) is otherwise collected in whichever path runs next.
v8.setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

/** Wall and CPU time of a stretch of work, summed over the rounds it was measured in. */
class Meter {
  wallMs = 0
  cpuMicros = 0
  count = 0
  async time(count: number, fn: () => unknown): Promise<void> {
    collectGarbage()
    const cpu = process.cpuUsage()
    const wall = performance.now()
    await fn()
    this.wallMs += performance.now() - wall
    const used = process.cpuUsage(cpu)
    this.cpuMicros += used.user + used.system
    this.count += count
  }
  get perSecond(): number {
    return (this.count / this.wallMs) * 1000
  }
  get perCpuSecond(): number {
    return (this.count / this.cpuMicros) * 1e6
  }
  /** `N/s (M per CPU-s)`. */
  describe(unit = 'messages'): string {
    return `${n(this.perSecond)} ${unit}/s (${n(this.perCpuSecond)} per CPU-s)`
  }
}

const n = (value: number): string => Math.round(value).toLocaleString('en')
const BATCH = 100
const ROUND = 100

/** A plain FTS5 table in a file of its own, with engram's journal settings. */
function plainFts(
  path: string,
  columns: string,
): { insert: (...values: string[]) => void; replace: (rowid: number, fresh: boolean, ...values: string[]) => void; transaction: (fn: () => void) => void; close: () => void } {
  const db = new DatabaseSync(path)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec(`CREATE VIRTUAL TABLE fts USING fts5(${columns}, tokenize = 'unicode61 remove_diacritics 2')`)
  const names = columns.split(', ')
  const statement = db.prepare(`INSERT INTO fts (${columns}) VALUES (${names.map(() => '?').join(', ')})`)
  const withRowid = db.prepare(`INSERT INTO fts (rowid, ${columns}) VALUES (?, ${names.map(() => '?').join(', ')})`)
  const remove = db.prepare('DELETE FROM fts WHERE rowid = ?')
  return {
    insert: (...values) => void statement.run(...values),
    replace: (rowid, fresh, ...values) => {
      if (!fresh) remove.run(rowid)
      withRowid.run(rowid, ...values)
    },
    transaction: (fn) => {
      db.exec('BEGIN IMMEDIATE')
      fn()
      db.exec('COMMIT')
    },
    close: () => db.close(),
  }
}

/** Measures part 1; returns its table rows and notes. */
export async function measureIngest(options: IngestOptions): Promise<{ rows: string[]; notes: string[] }> {
  const { backend, provider, clock } = options
  const agent = 'bench'
  const session = (sessionId: string): ContextSession => ({ sessionId, agent })
  const plain = plainFts(join(options.dir, 'plain-fts.db'), 'content')
  const withRelated = plainFts(join(options.dir, 'analysed-fts.db'), 'own, near, far, related, kind')
  const withoutRelated = plainFts(join(options.dir, 'analysed-fts-no-related.db'), 'own, near, far, kind')
  const singleRows = plainFts(join(options.dir, 'analysed-fts-single.db'), 'own, near, far, related, kind')
  const ownOnly = plainFts(join(options.dir, 'analysed-fts-own.db'), 'own, kind')
  const singleOwn = plainFts(join(options.dir, 'analysed-fts-single-own.db'), 'own, related, kind')
  const storeOnly = async (conversation: Conversation, messages: MessageInput[]): Promise<StoredMessage[]> => {
    const at = clock.now().toISOString()
    return backend.context.appendMessages(
      conversation.id,
      messages.map((m) => ({ ...m, at, tokenCount: countTokens(m.content) })),
    )
  }
  // The index write alone: the units an append of `stored` writes (the two before again), on stored messages of their own.
  const indexOnly = (conversation: Conversation, window: StoredMessage[], fresh: number): Promise<void> => {
    const from = Math.max(0, window.length - fresh)
    return backend.index!.upsert(messageUnitsWithNeighbours(conversation, window, from, Math.min(2, from)))
  }
  const lastTwo = (window: StoredMessage[]): StoredMessage[] => window.slice(-2)

  try {
    const singleStore = await backend.context.conversation('ingest-store-single', { agent })
    const singleIndex = await backend.context.conversation('ingest-index-single', { agent })
    const batchStore = await backend.context.conversation('ingest-store-batch', { agent })
    const batchIndex = await backend.context.conversation('ingest-index-batch', { agent })
    // Warm every path (module loading, the tokenizer's tables, first statements).
    for (let i = 0; i < 20; i++) {
      await provider.append(session('ingest-warm'), [options.message()])
      await storeOnly(singleStore, [options.message()])
    }

    // Single-message appends, in rounds of ROUND, each path in turn, so a change of load touches all
    // alike; the path that goes first turns with each round (where a path stands in the round moved
    // its rate by up to 2x on a loaded machine).
    const single = { engram: new Meter(), plain: new Meter(), store: new Meter(), index: new Meter(), rows: new Meter(), ownRows: new Meter() }
    let singleWindow: StoredMessage[] = []
    let formWindow: StoredMessage[] = []
    for (let done = 0, turn = 0; done < options.singles; done += ROUND, turn++) {
      const round = Array.from({ length: Math.min(ROUND, options.singles - done) }, () => options.message())
      clock.advance(1_000)
      // Message rows of the index conversation, indexed one at a time below, as appends index them.
      const indexRows = await storeOnly(singleIndex, round)
      const phases: Array<() => Promise<void>> = [
        () =>
          single.engram.time(round.length, async () => {
            for (const message of round) await provider.append(session('ingest-single'), [message])
          }),
        () =>
          single.plain.time(round.length, () => {
            for (const message of round) plain.transaction(() => plain.insert(message.content))
          }),
        () =>
          single.store.time(round.length, async () => {
            for (const message of round) await storeOnly(singleStore, [message])
          }),
        () =>
          single.index.time(round.length, async () => {
            for (const message of indexRows) {
              singleWindow = [...lastTwo(singleWindow), message]
              await indexOnly(singleIndex, singleWindow, 1)
            }
          }),
        async () => {
          // The FTS5 rows those index writes hold, analysed before the clock starts: the form's own cost.
          const appends: Array<Array<{ rowid: number; fresh: boolean; fields: ReturnType<typeof ftsFields> }>> = []
          for (const message of indexRows) {
            formWindow = [...lastTwo(formWindow), message]
            const from = formWindow.length - 1
            appends.push(
              messageUnitsWithNeighbours(singleIndex, formWindow, from, from).map((unit) => ({ rowid: Number(unit.provenance[0]), fresh: unit.id === `msg:${message.id}`, fields: ftsFields(unit) })),
            )
          }
          await single.rows.time(round.length, () => {
            for (const rows of appends) {
              singleRows.transaction(() => {
                for (const row of rows) singleRows.replace(row.rowid, row.fresh, ...row.fields)
              })
            }
          })
          // A form without neighbour fields writes one row per append and rewrites none.
          await single.ownRows.time(round.length, () => {
            for (const rows of appends) {
              const [own, , , related, kind] = rows.find((row) => row.fresh)!.fields
              singleOwn.transaction(() => singleOwn.insert(own, related, kind))
            }
          })
        },
      ]
      for (let p = 0; p < phases.length; p++) await phases[(p + turn) % phases.length]!()
    }

    const batch = { engram: new Meter(), plain: new Meter(), store: new Meter(), index: new Meter(), related: new Meter(), noRelated: new Meter(), own: new Meter() }
    let batchWindow: StoredMessage[] = []
    for (let b = 0; b < options.batches; b++) {
      const messages = Array.from({ length: BATCH }, () => options.message())
      clock.advance(1_000)
      const indexRows = await storeOnly(batchIndex, messages)
      batchWindow = [...lastTwo(batchWindow), ...indexRows]
      const phases: Array<() => Promise<void>> = [
        () => batch.engram.time(BATCH, () => provider.append(session('ingest-batch'), messages)),
        () =>
          batch.plain.time(BATCH, () =>
            plain.transaction(() => {
              for (const m of messages) plain.insert(m.content)
            }),
          ),
        () => batch.store.time(BATCH, () => storeOnly(batchStore, messages)),
        () => batch.index.time(BATCH, () => indexOnly(batchIndex, batchWindow, BATCH)),
        async () => {
          // The index form: the same rows' analysed fields, analysed before the clock starts.
          const fields = messageUnitsWithNeighbours(batchIndex, batchWindow, batchWindow.length - BATCH).map((unit) => ftsFields(unit))
          await batch.related.time(BATCH, () =>
            withRelated.transaction(() => {
              for (const f of fields) withRelated.insert(...f)
            }),
          )
          await batch.noRelated.time(BATCH, () =>
            withoutRelated.transaction(() => {
              for (const [own, near, far, , kind] of fields) withoutRelated.insert(own, near, far, kind)
            }),
          )
          await batch.own.time(BATCH, () =>
            ownOnly.transaction(() => {
              for (const [own, , , , kind] of fields) ownOnly.insert(own, kind)
            }),
          )
        },
      ]
      for (let p = 0; p < phases.length; p++) await phases[(p + b) % phases.length]!()
    }

    const ratio = (a: Meter, b: Meter): string => `${(b.perCpuSecond / a.perCpuSecond).toFixed(1)}×`
    const rows = [
      `| single-message appends (store + index, ${n(options.singles)} timed) | ${single.engram.describe()} | plain FTS5, one transaction per message: ${single.plain.describe()} (${ratio(single.engram, single.plain)} engram's CPU rate) | store alone: ${single.store.describe()}; index write alone: ${single.index.describe()} |`,
      `| appends in batches of ${BATCH} (${n(options.batches * BATCH)} messages timed) | ${batch.engram.describe()} | plain FTS5, ${BATCH} per transaction: ${batch.plain.describe()} (${ratio(batch.engram, batch.plain)} engram's CPU rate) | store alone: ${batch.store.describe()}; index write alone: ${batch.index.describe()} |`,
      `| index form (measurement): the FTS5 rows of one single-message append (its row, the two before it rewritten), already analysed, one transaction per message | ${single.rows.describe()} | a form without neighbour fields (its own row alone: own text, related words, kind): ${single.ownRows.describe()} | |`,
      `| index form (measurement): FTS5 rows of the analysed fields, already analysed, ${BATCH} per transaction | with related words (the current form): ${batch.related.describe('rows')} | without related words: ${batch.noRelated.describe('rows')} | own text and kind only: ${batch.own.describe('rows')} |`,
    ]
    const notes = [
      'Append rates: messages per second of wall time, and per CPU-second of the process (user + system; the reliable figure on a shared machine: wall time also waits for the checkpoints of the WAL, which sync).',
    ]
    return { rows, notes }
  } finally {
    plain.close()
    withRelated.close()
    withoutRelated.close()
    singleRows.close()
    ownOnly.close()
    singleOwn.close()
  }
}
