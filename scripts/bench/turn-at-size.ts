/**
 * Benchmark: `session.begin` over a large memory — N synthetic units (scripts/bench/synthetic-memories.ts)
 * in the user's own tree, then turns of that user, each `begin` timed in process CPU (user + system,
 * `process.cpuUsage` around the call) and wall time, and priming alone the same way; beside the
 * floor, measured in the same run on the same text and the same messages: plain SQLite FTS5, BM25
 * top-10 of the message's content words (OR), in a table of its own. Run by `npm run bench -- turn --units N`
 * (options `--turns N`, default 200; `--home DIR` keeps the built home there, and each run starts
 * from a copy of it).
 *
 * The background work a turn's `end` queues is waited for (`mind.idle()`) between turns and not
 * counted: the figure is the cost of `begin` itself, what the host waits for before its model call.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { setTimeout as sleep } from 'node:timers/promises'
import { ManualClock } from '../../src/core/clock.ts'
import { openMindInternals } from '../../src/mind-internals.ts'
import type { Turn } from '../../src/session/turn.ts'
import { analyseQuery } from '../../src/memory/retrieval/query-analysis.ts'
import { seededRandom } from '../../src/test-support/seeded-random.ts'
import { SETTLE_MS } from '../../src/storage/files/file-stamp.ts'
import { makeCorpus } from './synthetic-memories.ts'

const NOW = new Date('2026-06-01T12:00:00Z')
const USER = 'ada'
const BATCH = 50_000
const WARM_UP = 20

interface Figures {
  cpu: number[]
  wall: number[]
}

/** Runs `work`, adding its process CPU and wall milliseconds to `into` when `counted`. */
async function measure<T>(into: Figures, counted: boolean, work: () => Promise<T> | T): Promise<T> {
  const cpu = process.cpuUsage()
  const t = performance.now()
  const result = await work()
  const wall = performance.now() - t
  const used = process.cpuUsage(cpu)
  if (counted) {
    into.cpu.push((used.user + used.system) / 1000)
    into.wall.push(wall)
  }
  return result
}

const pct = (samples: number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN
}

export async function benchTurnAtSize(options: { units: number; turns: number; home?: string }): Promise<void> {
  // The built home is kept (in --home, else for this run) and each pass starts from a copy of it:
  // turns write into it (messages, activity), and a pass must start from the same memory as the
  // pass, or the run, it is compared with.
  const kept = options.home ?? mkdtempSync(join(tmpdir(), 'engram-bench-turn-size-'))
  try {
    if (!existsSync(join(kept, 'built'))) await build(kept, options.units)
    if (readFileSync(join(kept, 'built'), 'utf8') !== String(options.units)) throw new Error(`${kept} holds a home of another size: use another --home`)
    // Two passes of the same turns: one times `begin`, the other priming alone just before each
    // turn. Timed in one pass, each would find the caches the other just filled.
    const turns = await pass(kept, options, 'begin')
    const primed = await pass(kept, options, 'prime')
    const row = (name: string, f: Figures, base?: Figures) => {
      const ratio = (p: number) => (base ? ` (${(pct(f.cpu, p) / pct(base.cpu, p)).toFixed(1)}×)` : '')
      return `| ${name} | ${pct(f.cpu, 0.5).toFixed(2)}${ratio(0.5)} | ${pct(f.cpu, 0.95).toFixed(2)}${ratio(0.95)} | ${pct(f.wall, 0.5).toFixed(2)} | ${pct(f.wall, 0.95).toFixed(2)} |`
    }
    console.log(`session.begin at ${options.units} units in the user's tree: ${options.turns} turns (first ${WARM_UP} not counted), Node ${process.version}`)
    console.log('| measure | CPU p50 ms (× floor) | CPU p95 ms (× floor) | wall p50 ms | wall p95 ms |')
    console.log('|---|---|---|---|---|')
    console.log(row('plain FTS5 BM25 top-10 of the message (the floor)', turns.floor))
    console.log(row('priming alone (mind.primer.prime, before each turn)', primed.timed, turns.floor))
    console.log(row('session.begin', turns.timed, turns.floor))
  } finally {
    if (!options.home) rmSync(kept, { recursive: true, force: true })
  }
}

/** Builds the home in `kept`: the units in the user's tree, a plain FTS5 table of the same texts, what a turn reads besides. */
async function build(kept: string, units: number): Promise<void> {
  mkdirSync(kept, { recursive: true })
  const mind = await openMindInternals({ home: join(kept, 'home'), env: envOf(kept), ignoreConfigFile: true, clock: new ManualClock(NOW), reindexOnOpen: false })
  const floorDb = new DatabaseSync(join(kept, 'floor.db'))
  try {
    const corpus = makeCorpus({ now: NOW, agent: mind.agent })
    floorDb.exec('CREATE VIRTUAL TABLE floor USING fts5(text)')
    const insert = floorDb.prepare('INSERT INTO floor(rowid, text) VALUES (?, ?)')
    const started = performance.now()
    for (let i = 0; i < units; i += BATCH) {
      const batch = []
      for (let j = i; j < Math.min(units, i + BATCH); j++) batch.push({ ...corpus.unit(j), owner: `user:${USER}` as const, user: USER })
      await mind.backend.index.upsert(batch)
      floorDb.exec('BEGIN')
      for (const [k, unit] of batch.entries()) insert.run(i + k + 1, unit.text)
      floorDb.exec('COMMIT')
      process.stderr.write(`\r${Math.min(units, i + BATCH)} units, ${((performance.now() - started) / 1000).toFixed(0)} s   `)
    }
    // What a turn reads besides the index: the user's profile, procedures.
    await mind.backend.documents.write('user', USER, { name: 'Ada' }, '# Ada\n\n- Prefers short answers.\n- Works on the staging cluster.\n- Timezone: Europe/Berlin.\n')
    for (let p = 0; p < 20; p++) {
      await mind.backend.documents.write('procedure', `procedure-${p}`, { description: corpus.sentence(5, 9) }, `# Procedure ${p}\n\n${corpus.sentence(10, 20)}\n`)
    }
    await mind.indexed()
    process.stderr.write('\n')
  } finally {
    floorDb.close()
    await mind.close()
  }
  writeFileSync(join(kept, 'built'), String(units))
}

const envOf = (root: string) => ({ HOME: join(root, 'user-home'), PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' })

/** One pass of turns on a copy of the kept home: `begin` timed (with the floor), or priming alone before each turn. */
async function pass(kept: string, options: { units: number; turns: number }, timing: 'begin' | 'prime'): Promise<{ timed: Figures; floor: Figures }> {
  const root = mkdtempSync(join(tmpdir(), 'engram-bench-turn-size-'))
  cpSync(kept, root, { recursive: true })
  // The copy gives every file a new change time, and a file changed in the last SETTLE_MS is read
  // again rather than trusted by its stamp (file-stamp.ts): an agent's home was not all written a
  // moment ago, so the pass starts once the copy has settled (decision 0096).
  await sleep(SETTLE_MS + 100)
  const clock = new ManualClock(NOW)
  const mind = await openMindInternals({ home: join(root, 'home'), env: envOf(root), ignoreConfigFile: true, clock, reindexOnOpen: false })
  const floorDb = new DatabaseSync(join(root, 'floor.db'))
  try {
    const corpus = makeCorpus({ now: NOW, agent: mind.agent })
    const random = seededRandom(options.units)
    // Mid-frequency words (Zipf ranks 100–5,000): the words people actually ask about.
    const word = (): string => corpus.vocabulary[100 + Math.floor(random() * 4900)] as string
    const message = (i: number): string => {
      switch (i % 4) {
        case 0:
          return `what did we decide about the ${word()} and ${word()} ${word()}?`
        case 1:
          return `why does the ${word()} ${word()} keep failing when ${word()} is on?`
        case 2:
          return `please update the ${word()} notes with the ${word()} ${word()} results and tell ${word()}`
        default:
          return `can you remind me what the ${word()} ${word()} was for?`
      }
    }
    const messages = Array.from({ length: options.turns + WARM_UP }, (_, i) => message(i))
    const floorQuery = floorDb.prepare('SELECT rowid FROM floor WHERE floor MATCH ? ORDER BY bm25(floor) LIMIT 10')
    // The message's content words (engram's own query analysis drops the function words, which
    // would make any OR query score nearly every row), OR'd, as a plain full-text search is asked.
    const floorOf = (text: string) => analyseQuery(text, 12).terms.map((w) => `"${w}"`).join(' OR ')
    const floor: Figures = { cpu: [], wall: [] }
    const timed: Figures = { cpu: [], wall: [] }
    const scope = mind.scope(USER)
    for (let i = 0; i < messages.length; i++) {
      const text = messages[i] as string
      const counted = i >= WARM_UP
      const session = mind.session(`chat-${Math.floor(i / 40)}`, { user: USER })
      let turn: Turn
      if (timing === 'begin') {
        await measure(floor, counted, () => floorQuery.all(floorOf(text)))
        turn = await measure(timed, counted, () => session.begin(text))
      } else {
        await measure(timed, counted, () =>
          mind.primer.prime({ message: text, viewer: scope.viewer, activity: scope.view.activity, procedures: scope.procedures, skipProfile: true, asOf: clock.now().toISOString() }),
        )
        turn = await session.begin(text)
      }
      await session.end(turn, `Noted: item ${i}, with the figures you gave.`)
      // The work `end` queued is not `begin`'s: done before the next turn, not timed.
      await mind.idle()
      clock.advance(30_000)
    }
    return { timed, floor }
  } finally {
    floorDb.close()
    await mind.close()
    rmSync(root, { recursive: true, force: true })
  }
}
