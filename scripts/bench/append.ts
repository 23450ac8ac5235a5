/**
 * Benchmark: append throughput of the context store with 8 concurrent writers (decision 0037), as
 * hosts append a chat: each writer is a process of its own that opens a mind and appends
 * `--messages` messages (default 2,000) through `mind.context.append`, in batches of 1–5 (a turn,
 * a tool exchange), each batch timed.
 *
 *   node scripts/bench/append.ts [--backend embedded|postgres|both] [--messages 2000] [--writers 8]
 *
 * Per backend, three runs, each on a fresh store:
 *  - one writer, one conversation (the baseline: no one to wait for);
 *  - `--writers` writers, each its own conversation (hosts serving different users);
 *  - `--writers` writers, all one conversation (one conversation served by many hosts: every
 *    append waits for the conversation's lock).
 * Embedded: the writers are processes on ONE home, sharing its SQLite file. PostgreSQL: each writer
 * has a home of its own and shares only the database (a fresh schema `bench_<random>` per run,
 * dropped after it), as hosts would. `postgres` (or `both`) measures the embedded backend beside
 * PostgreSQL in the same run. The server is ENGRAM_DATABASE_URL, else the test server that
 * `npm run bench -- append --backend postgres` starts (scripts/run.sh).
 *
 * An append stores the messages and indexes them for search (the two messages before them are
 * indexed again with their new neighbours), as a host's turn does. Messages/s = all messages of all
 * writers over the wall time from the start signal to the last writer's last append.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { openMindInternals } from '../../src/mind-internals.ts'
import { type BenchBackend, benchBackends, benchDatabaseUrl, describeServer, dropSchema } from './postgres-target.ts'
import { makeCorpus } from './synthetic-memories.ts'

const { values, positionals } = parseArgs({
  options: {
    backend: { type: 'string', default: 'embedded' },
    messages: { type: 'string', default: '2000' },
    writers: { type: 'string', default: '8' },
    keep: { type: 'boolean', default: false },
    /** Internal: one writer process. */
    child: { type: 'boolean', default: false },
  },
  allowPositionals: true,
})

const pct = (samples: number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN
}
const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(1))

/** What a writer reports: its append calls' times and when it started and finished (epoch ms). */
interface WriterResult {
  messages: number
  calls: number[]
  startedAt: number
  finishedAt: number
  /** The writer process's CPU seconds (user + system) from the start signal to its last append. */
  cpu: number
}

/**
 * One writer: opens a mind (`home`, and the database when ENGRAM_DATABASE_URL is set), says
 * `ready`, waits for the start file, appends `count` messages to session `session` in batches of
 * 1–5 and prints its WriterResult.
 */
async function writer(home: string, session: string, seed: number, count: number, startFile: string): Promise<void> {
  const mind = await openMindInternals({ home, env: { HOME: home, ...pick(process.env, ['ENGRAM_DATABASE_URL', 'ENGRAM_DATABASE_SCHEMA']) }, ignoreConfigFile: true, reindexOnOpen: false })
  const corpus = makeCorpus({ seed, now: new Date(), agent: mind.agent })
  let state = seed
  const random = (): number => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648
  }
  // Chat-sized messages: mostly a sentence or two, some longer answers.
  const content = (): string => (random() < 0.8 ? corpus.sentence(5, 40) : Array.from({ length: 4 + Math.floor(random() * 8) }, () => corpus.sentence(8, 30)).join(' '))
  // Warm the path (module loading, the conversation row, the first statements) before the start.
  const who = { sessionId: `${session}-warm-${seed}`, agent: mind.agent }
  await mind.context.append(who, [{ role: 'user', content: content() }])
  process.stdout.write('ready\n')
  while (!existsSync(startFile)) await sleep(2)
  const target = { sessionId: session, agent: mind.agent }
  const calls: number[] = []
  const startedAt = Date.now()
  const cpuAtStart = process.cpuUsage()
  let sent = 0
  while (sent < count) {
    const size = Math.min(1 + Math.floor(random() * 5), count - sent)
    const messages = Array.from({ length: size }, (_, k) => ({ role: (sent + k) % 2 === 0 ? ('user' as const) : ('assistant' as const), content: content() }))
    const t = performance.now()
    await mind.context.append(target, messages)
    calls.push(performance.now() - t)
    sent += size
  }
  const finishedAt = Date.now()
  const used = process.cpuUsage(cpuAtStart)
  await mind.close()
  const result: WriterResult = { messages: sent, calls, startedAt, finishedAt, cpu: (used.user + used.system) / 1e6 }
  process.stdout.write(`@@result ${JSON.stringify(result)}\n`)
}

function pick(env: NodeJS.ProcessEnv, keys: string[]): Record<string, string> {
  return Object.fromEntries(keys.flatMap((key) => (env[key] ? [[key, env[key] as string]] : [])))
}

interface Scenario {
  label: string
  writers: number
  oneConversation: boolean
}

/** `url` with `application_name` set to `name`. */
function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url)
  parsed.searchParams.set('application_name', name)
  return parsed.toString()
}

/**
 * CPU seconds of the server processes serving connections named `name`, read from /proc while
 * they live (every 200 ms; what a process spends after its last reading is not counted). The
 * server must run on this machine; undefined when /proc cannot be read.
 */
function watchServerCpu(url: string, name: string): { stop(): Promise<number | undefined> } {
  const ticks = 100 // USER_HZ on Linux
  const seen = new Map<number, { first: number; last: number }>()
  const readCpu = (pid: number): number | undefined => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      return (Number(fields[11]) + Number(fields[12])) / ticks
    } catch {
      return undefined
    }
  }
  let stopped = false
  let readable = false
  let polled = false
  const client = new pg.Client({ connectionString: url })
  const loop = (async () => {
    await client.connect()
    while (!stopped) {
      const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [name])
      for (const { pid } of rows) {
        const cpu = readCpu(pid)
        // A connection closed meanwhile; /proc unreadable when none was ever read.
        if (cpu === undefined) continue
        readable = true
        const entry = seen.get(pid)
        if (entry) entry.last = cpu
        else seen.set(pid, { first: polled ? 0 : cpu, last: cpu })
      }
      polled = true
      await sleep(200)
    }
    await client.end()
  })()
  return {
    async stop() {
      stopped = true
      await loop
      if (!readable) return undefined
      // A connection opened before the start (the writers' warm-up) counts from its first reading.
      return [...seen.values()].reduce((n, entry) => n + entry.last - entry.first, 0)
    },
  }
}

interface Row {
  backend: BenchBackend
  scenario: string
  writers: number
  messages: number
  seconds: number
  perSecond: number
  p50: number
  p95: number
  max: number
  /** CPU seconds of the writer processes, and of the server processes serving them (PostgreSQL on this machine). */
  writersCpu: number
  serverCpu: number | undefined
}

/** Starts `writers` writer processes, lets them go at once and collects what they report. */
async function runScenario(backend: BenchBackend, scenario: Scenario, perWriter: number): Promise<Row> {
  const root = join(tmpdir(), `engram-bench-append-${backend}-${process.pid}-${randomBytes(3).toString('hex')}`)
  mkdirSync(root, { recursive: true })
  const startFile = join(root, 'start')
  const schema = `bench_${randomBytes(5).toString('hex')}`
  // The writers' connections carry the schema's name (a URL parameter overrides the driver's
  // application_name), so that their server processes' CPU can be told from other clients'.
  const url = backend === 'postgres' ? withApplicationName(benchDatabaseUrl(), schema) : undefined
  try {
    const children = Array.from({ length: scenario.writers }, (_, w) => {
      // Embedded: one home for all (they share its SQLite file). PostgreSQL: a home each, one database.
      const home = url === undefined ? join(root, 'home') : join(root, `home-${w}`)
      const session = scenario.oneConversation ? 'shared-conversation' : `conversation-${w}`
      const env: NodeJS.ProcessEnv = { ...process.env }
      delete env.ENGRAM_DATABASE_URL
      delete env.ENGRAM_DATABASE_SCHEMA
      if (url !== undefined) Object.assign(env, { ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema })
      const args = [...process.execArgv, fileURLToPath(import.meta.url), '--child', home, session, String(w + 1), String(perWriter), startFile]
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env })
      let out = ''
      child.stdout.setEncoding('utf8')
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: string) => {
          out += chunk
          if (out.includes('ready\n')) resolve()
        })
        child.on('close', () => reject(new Error(`writer ${w} exited before it was ready`)))
      })
      const done = new Promise<WriterResult>((resolve, reject) => {
        child.on('close', (code, signal) => {
          const line = out.split('\n').find((l) => l.startsWith('@@result '))
          if (line) resolve(JSON.parse(line.slice('@@result '.length)) as WriterResult)
          else reject(new Error(`writer ${w} exited with ${signal ?? code} and no result`))
        })
      })
      return { ready, done }
    })
    // On one embedded home the writers open it one after the other (its first open creates it).
    await Promise.all(children.map((c) => c.ready))
    const serverCpu = url === undefined ? undefined : watchServerCpu(url, schema)
    const start = Date.now()
    writeFileSync(startFile, '')
    const results = await Promise.all(children.map((c) => c.done))
    const server = await serverCpu?.stop()
    const end = Math.max(...results.map((r) => r.finishedAt))
    const calls = results.flatMap((r) => r.calls)
    const messages = results.reduce((n, r) => n + r.messages, 0)
    const seconds = (end - start) / 1000
    const row: Row = {
      backend,
      scenario: scenario.label,
      writers: scenario.writers,
      messages,
      seconds,
      perSecond: messages / seconds,
      p50: pct(calls, 0.5),
      p95: pct(calls, 0.95),
      max: Math.max(...calls),
      writersCpu: results.reduce((n, r) => n + r.cpu, 0),
      serverCpu: server,
    }
    process.stderr.write(`${JSON.stringify(row)}\n`)
    return row
  } finally {
    if (url !== undefined && !values.keep) await dropSchema(url, schema)
    if (!values.keep) rmSync(root, { recursive: true, force: true })
  }
}

if (values.child) {
  const [home, session, seed, count, startFile] = positionals
  if (!home || !session || !seed || !count || !startFile) throw new Error('usage: append.ts --child HOME SESSION SEED COUNT START-FILE')
  await writer(home, session, Number(seed), Number(count), startFile)
} else {
  const backends = benchBackends(String(values.backend))
  const perWriter = Number(values.messages)
  const writers = Number(values.writers)
  const server = backends.includes('postgres') ? await describeServer(benchDatabaseUrl()) : undefined
  const scenarios: Scenario[] = [
    { label: 'one writer, one conversation (baseline)', writers: 1, oneConversation: true },
    { label: `${writers} writers, ${writers} conversations`, writers, oneConversation: false },
    { label: `${writers} writers, one conversation`, writers, oneConversation: true },
  ]
  const rows: Row[] = []
  // Backends alternate within each scenario, so a change of the machine's load touches both.
  for (const scenario of scenarios) for (const backend of backends) rows.push(await runScenario(backend, scenario, perWriter))
  console.log(`Append benchmark (Node ${process.version}, ${process.platform}/${process.arch}; ${perWriter} messages per writer in batches of 1–5 through mind.context.append)`)
  if (server) console.log(`PostgreSQL: ${server}`)
  console.log('')
  console.log('| backend | run | messages | wall s | messages/s | append call p50 / p95 / max ms | CPU s writers + server (cores busy) |')
  console.log('|---|---|---|---|---|---|---|')
  for (const r of rows) {
    const cpu = r.writersCpu + (r.serverCpu ?? 0)
    const cpuText = `${r.writersCpu.toFixed(1)} + ${r.serverCpu === undefined ? '?' : r.serverCpu.toFixed(1)} (${(cpu / r.seconds).toFixed(2)})`
    console.log(`| ${r.backend} | ${r.scenario} | ${r.messages.toLocaleString('en')} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(0)} | ${ms(r.p50)} / ${ms(r.p95)} / ${ms(r.max)} | ${cpuText} |`)
  }
}
