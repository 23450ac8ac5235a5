/**
 * Benchmark (decision 0027): many agent processes writing one home. Each process opens
 * the home with `createMind` and calls the `memorize` tool through sessions; the memory files are
 * then read back and checked against what every call reported.
 *
 * - 8 processes × 200 calls, all in flight at once: a session without a user, then three users
 *   and the agent with one text in ten saved by every process (one must say saved, seven duplicate);
 * - baseline, same run: the same 1,600 calls one after the other in one process;
 * - a lock holder killed with SIGKILL while processes wait for its lock: how long they stay blocked;
 * - writers killed with SIGKILL mid-write: temp files they leave, and after the next write.
 *
 * Run on its own: `node scripts/bench/robustness/contention.ts [--workers 8] [--calls 200] [--kills 5] [--writer-kills 10]`
 * (through `scripts/run.sh node …`); `npm run bench -- robustness` runs it with the others.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { isTempFileName } from '../../../src/storage/atomic-write.ts'
import { createFileLocks } from '../../../src/storage/files/locks.ts'
import { createMind } from '../../../src/mind.ts'
import {
  type ContentionCheck,
  checkContention,
  type MemorizersOptions,
  runKilledHolder,
  runMemorizers,
  startMemorizer,
} from '../../../src/memory/engrams/test-support/memorize-contention.ts'

const HOLD_LOCK = fileURLToPath(new URL('../../../src/storage/files/test-support/hold-lock.ts', import.meta.url))
const DIE_MID_WRITE = fileURLToPath(new URL('../../../src/storage/files/test-support/die-mid-write.ts', import.meta.url))

export interface ContentionBenchOptions {
  /** Processes writing at once (default 8). */
  workers?: number
  /** memorize calls per process (default 200). */
  calls?: number
  /** Trials of the killed lock holder (default 5). */
  kills?: number
  /** Writers killed mid-write, for the temp-file count (default 10). */
  writerKills?: number
}

interface Home {
  home: string
  env: Record<string, string>
  cleanup(): void
}

async function freshHome(): Promise<Home> {
  const root = mkdtempSync(join(tmpdir(), 'engram-bench-contention-'))
  const home = join(root, 'home')
  const env = { HOME: root, PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' }
  // The home and its database exist before the processes start, as they do for agents sharing one.
  await (await createMind({ home, env, ignoreConfigFile: true })).close()
  return { home, env, cleanup: () => rmSync(root, { recursive: true, force: true }) }
}

const seconds = (ms: number) => (ms / 1000).toFixed(1)
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

function row(label: string, ms: number, check: ContentionCheck): string {
  const wrong = check.misplaced.length + check.dishonest.length + check.problems.length
  return `| ${label} | ${seconds(ms)} | ${check.saved} | ${check.duplicates} | ${check.rejected} | ${check.lost.length} | ${wrong} |`
}

/** Why calls were rejected, shown under the table (the first few, once each). */
const rejections = new Set<string>()

async function measureRun(label: string, options: Omit<MemorizersOptions, 'home' | 'env'>): Promise<string> {
  const home = await freshHome()
  try {
    const run: MemorizersOptions = { ...options, home: home.home, env: home.env }
    const { ms, tallies } = await runMemorizers(run)
    for (const reason of tallies.flatMap((tally) => tally.reasons)) if (rejections.size < 5) rejections.add(reason.split('\n')[0] as string)
    return row(label, ms, checkContention(home.home, run, tallies))
  } finally {
    home.cleanup()
  }
}

function tempFilesUnder(dir: string): number {
  let count = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) count += tempFilesUnder(join(dir, entry.name))
    else if (isTempFileName(entry.name)) count++
  }
  return count
}

/**
 * Writers SIGKILLed between their temp file and its rename (`die-mid-write.ts` stops there, so the
 * kill always lands in that window): the temp files they leave, and what is left after the next
 * process saves a rule.
 */
async function killedWriters(kills: number): Promise<{ left: number; after: number }> {
  const home = await freshHome()
  try {
    const memory = join(home.home, 'agents', 'default', 'memory')
    for (let k = 0; k < kills; k++) {
      const writer = spawn(process.execPath, [DIE_MID_WRITE, join(memory, 'rules.md')], { stdio: ['ignore', 'pipe', 'inherit'] })
      await new Promise<void>((resolve) => writer.stdout.once('data', () => resolve()))
      const exited = new Promise((resolve) => writer.once('exit', resolve))
      writer.kill('SIGKILL')
      await exited
    }
    const left = tempFilesUnder(memory)
    const next = { home: home.home, env: home.env, workers: 1, count: 8, how: 'sequential', owners: 'agent' } as const
    await startMemorizer(next, 0).done
    return { left, after: tempFilesUnder(memory) }
  } finally {
    home.cleanup()
  }
}

/** A process holding a lock is SIGKILLed while this one waits for it: ms from the kill to the lock (locks alone). */
async function lockHandover(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-lock-'))
  try {
    const holder = spawn(process.execPath, [HOLD_LOCK, dir, 'handover'], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()))
    const waiting = createFileLocks({ dir }).withLock('handover', async () => performance.now())
    await sleep(300)
    const killedAt = performance.now()
    holder.kill('SIGKILL')
    const outcome = await waiting
    return outcome.kind === 'done' ? outcome.value - killedAt : Number.NaN
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs the contention benchmark and returns its markdown table(s). */
export async function run(options: ContentionBenchOptions = {}): Promise<string> {
  const workers = options.workers ?? 8
  const calls = options.calls ?? 200
  const kills = options.kills ?? 5
  const writerKills = options.writerKills ?? 10
  const total = workers * calls
  const lines = [
    `Many processes writing one home: ${workers} processes × ${calls} \`memorize\` calls (each its own process, \`createMind\` → session → tool), Node ${process.version}. Time is wall time from the first process started to the last one exited (opening included).`,
    '',
    '| run | time s | saved | duplicates | rejected | lost | stored twice, misplaced or unreadable |',
    '|---|---|---|---|---|---|---|',
    await measureRun(`${workers} × ${calls} in flight at once, a session without a user`, { workers, count: calls, how: 'in-flight', owners: 'agent' }),
    await measureRun(`${workers} × ${calls} in flight at once, three users and the agent, 1 text in 10 saved by every process`, {
      workers,
      count: calls,
      how: 'in-flight',
      owners: 'users',
      sharedEvery: 10,
    }),
    await measureRun(`baseline: the same ${total} calls one after the other in one process`, { workers: 1, count: total, how: 'sequential', owners: 'agent' }),
  ]

  if (rejections.size > 0) lines.push('', 'Rejected because:', ...[...rejections].map((reason) => `- ${reason}`))

  const locksAlone: number[] = []
  const after = { killed: { first: [] as number[], all: [] as number[] }, released: { first: [] as number[], all: [] as number[] } }
  let wrong = 0
  for (let trial = 0; trial < kills; trial++) {
    locksAlone.push(await lockHandover())
    for (const graceful of [false, true]) {
      const home = await freshHome()
      try {
        const outcome = await runKilledHolder({ home: home.home, env: home.env, workers: 4, count: 100, graceful })
        const times = graceful ? after.released : after.killed
        times.first.push(outcome.handoverMs)
        times.all.push(outcome.allWaitersMs)
        wrong += outcome.check.lost.length + outcome.check.misplaced.length + outcome.check.dishonest.length + outcome.check.rejected
      } finally {
        home.cleanup()
      }
    }
  }
  const temps = await killedWriters(writerKills)
  const ms = (value: number) => Math.round(value)
  lines.push(
    '',
    `| a process killed with SIGKILL (${kills} trials) | median | max |`,
    '|---|---|---|',
    `| a lock's holder killed: until a waiting process holds the lock, ms | ${ms(median(locksAlone))} | ${ms(Math.max(...locksAlone))} |`,
    `| holder of rules.md's lock killed while 4 processes × 100 calls wait: until the first waiting call returned saved, ms | ${ms(median(after.killed.first))} | ${ms(Math.max(...after.killed.first))} |`,
    `| … until every waiting process had a rule saved, ms | ${ms(median(after.killed.all))} | ${ms(Math.max(...after.killed.all))} |`,
    `| control, the holder releases instead: until the first waiting call returned saved, ms | ${ms(median(after.released.first))} | ${ms(Math.max(...after.released.first))} |`,
    `| … until every waiting process had a rule saved, ms | ${ms(median(after.released.all))} | ${ms(Math.max(...after.released.all))} |`,
    `| calls lost, rejected or misreported in those ${2 * kills} runs | ${wrong} | |`,
    '',
    `Writers of rules.md killed with SIGKILL between their temp file and its rename: ${writerKills}; temp files they left: ${temps.left}; left after the next process saved a rule: ${temps.after}.`,
  )
  return lines.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { workers: { type: 'string' }, calls: { type: 'string' }, kills: { type: 'string' }, 'writer-kills': { type: 'string' } } })
  console.log(
    await run({
      ...(values.workers ? { workers: Number(values.workers) } : {}),
      ...(values.calls ? { calls: Number(values.calls) } : {}),
      ...(values.kills ? { kills: Number(values.kills) } : {}),
      ...(values['writer-kills'] ? { writerKills: Number(values['writer-kills']) } : {}),
    }),
  )
}
