/**
 * Benchmark: `engram serve` under 1, 10 and 50 clients (`--clients`, comma-separated) — the real
 * server in a child process on loopback with its `--workers` processes (default serve.workers: one
 * per core), clients of `--users` users (default 4) for `--seconds` each (default 60), each
 * beginning a turn, searching, ending the turn and every other round memorizing a lesson
 * (test/support/serve-clients.ts). A busy server's refusal (503 with Retry-After, decision 0089)
 * is counted apart, and its client sends the request again when told.
 *
 * Per client count: answers per second, the server's CPU (every process of it, from /proc) per
 * wall second — the cores it used — and answers per CPU-second of the server, which is answers per
 * second per core; begin p50/p95; errors; refusals and their p95; per route p50/p95/p99.
 *
 * Baseline, measured in the same run at each count: the same clients doing the same operations
 * through the library in-process (`createMind`, `session.begin/end`, the search and memorize
 * tools) on a home of their own, for as long, with the bench process's own CPU. The difference is
 * what HTTP costs — the socket, JSON both ways, the token check, the route's checks — and what the
 * server's processes add. The first `--warmup` seconds (default 5) of each run are not counted.
 *
 * Run: `npm run bench -- serve [--clients 1,10,50] [--seconds N] [--users N] [--warmup N] [--workers N]
 * [--in-work N] [--queued N] [--no-baseline]` (the last three: serve.requestsInWork and
 * serve.requestsQueued of the server; no in-process runs).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createMind } from '../../src/mind.ts'
import type { Turn } from '../../src/session/turn.ts'
import { type LoadRun, type Outcome, quantile, ROUTES, runClients, type Send, type ServeUser } from '../../test/support/serve-clients.ts'
import { startServe } from '../../test/support/serve-process.ts'

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1,10,50' },
    seconds: { type: 'string', default: '60' },
    users: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '5' },
    workers: { type: 'string' },
    'in-work': { type: 'string' },
    queued: { type: 'string' },
    'no-baseline': { type: 'boolean', default: false },
  },
})
const counts = values.clients.split(',').map(Number)
const seconds = Number(values.seconds)
const warmupMs = Number(values.warmup) * 1000
const users: ServeUser[] = Array.from({ length: Number(values.users) }, (_, i) => ({ user: `user-${i}`, token: `bench-token-of-user-${i}-0123456789` }))
const dir = mkdtempSync(join(tmpdir(), 'engram-bench-serve-'))
const env = { HOME: dir, PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' }

/** CPU milliseconds of a process (with its children: the server's processes), from /proc: Linux only, else NaN. */
function processCpuMs(pid: number, withChildren = true): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const own = (Number(fields[11]) + Number(fields[12])) * 10 // utime + stime, in ticks of 10 ms
    if (!withChildren) return own
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
    return own + children.reduce((sum, child) => sum + processCpuMs(child), 0)
  } catch {
    return Number.NaN
  }
}

function ownCpuMs(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

interface Measured {
  run: LoadRun
  started: number
  /** CPU ms of the server (HTTP) or of this process (in-process) over the counted part of the run. */
  cpuMs: number
  /** CPU ms of the clients (this process) and of the server's first process alone, over HTTP. */
  clientsCpuMs?: number
  firstCpuMs?: number
}

/** Runs `clients` clients for the run's length, measuring `cpuMs()` from the end of the warmup to the end. */
async function measured(clients: number, cpuMs: () => number, send: Send | undefined, address: string, run: string, serverPid?: number): Promise<Measured> {
  const started = performance.now()
  const probes = { server: cpuMs, clients: ownCpuMs, first: () => (serverPid === undefined ? Number.NaN : processCpuMs(serverPid, false)) }
  let atWarm = { server: Number.NaN, clients: Number.NaN, first: Number.NaN }
  const warm = setTimeout(() => {
    atWarm = { server: probes.server(), clients: probes.clients(), first: probes.first() }
  }, warmupMs)
  const result = await runClients({ address, ...(send ? { send } : {}), users, clients, run, running: () => performance.now() - started < seconds * 1000 })
  clearTimeout(warm)
  return { run: result, started, cpuMs: probes.server() - atWarm.server, clientsCpuMs: probes.clients() - atWarm.clients, firstCpuMs: probes.first() - atWarm.first }
}

// Through HTTP: one server for every count.
const server = await startServe({
  home: join(dir, 'served'),
  env: {
    ...env,
    ENGRAM_SERVE_TOKENS: users.map(({ user, token }) => `${token}=default:${user}`).join(','),
    ...(values['in-work'] !== undefined ? { ENGRAM_SERVE_REQUESTS_IN_WORK: values['in-work'] } : {}),
    ...(values.queued !== undefined ? { ENGRAM_SERVE_REQUESTS_QUEUED: values.queued } : {}),
  },
  killAfterMs: (counts.length * seconds * 2 + 300) * 1000,
  ...(values.workers !== undefined ? { args: ['--workers', values.workers] } : {}),
})
const workers = Number(server.started.workers ?? 1)
const letters = 'abcdefghij'
const overHttp: Measured[] = []
for (const [i, clients] of counts.entries()) overHttp.push(await measured(clients, () => processCpuMs(server.pid), undefined, server.address, `h${letters[i]}`, server.pid))
const code = await server.stop('SIGTERM')
if (code !== 0) console.error(`engram serve exited ${code}:\n${server.stderr()}`)

// The same operations in-process.
const mind = await createMind({ home: join(dir, 'in-process'), env, ignoreConfigFile: true })
const begun = new Map<string, { session: ReturnType<typeof mind.session>; turn: Turn }>()
const inProcess: Send = async (route, user, body) => {
  try {
    if (route === 'turns/begin') {
      const session = mind.session(body.session as string, { user: user.user })
      const turn = await session.begin(body.message as string)
      begun.set(`${body.session}#${turn.number}`, { session, turn })
      return { status: 200, json: { turn: { number: turn.number } } }
    }
    if (route === 'turns/end') {
      const key = `${body.session}#${body.turn}`
      const open = begun.get(key)
      if (!open) return { status: 404, json: {} }
      begun.delete(key)
      return { status: 200, json: { ...(await open.session.end(open.turn, body.reply as string)) } }
    }
    const tools = mind.agentTools({ sessionId: `bench:${user.user}`, user: user.user })
    const tool = tools.find((candidate) => candidate.name === (route === 'search' ? 'search_memory' : 'memorize'))
    if (!tool) throw new Error(`no ${route} tool`)
    const result = await tool.execute(body)
    return { status: result.isError ? 500 : 200, json: route === 'memorize' ? { report: result.data } : { ...(result.data as Record<string, unknown>) } }
  } catch (error) {
    return { status: 500, json: { error: (error as Error).message } }
  }
}
const baselines: Measured[] = []
if (!values['no-baseline']) for (const [i, clients] of counts.entries()) baselines.push(await measured(clients, ownCpuMs, inProcess, '', `b${letters[i]}`))
await mind.close()
rmSync(dir, { recursive: true, force: true })

const ms = (value: number) => (Number.isNaN(value) ? '–' : value.toFixed(1))
const countedSeconds = seconds - warmupMs / 1000
const counted = ({ run, started }: Measured) => run.outcomes.filter((outcome) => outcome.sentAt >= started + warmupMs)
const answered = (outcomes: readonly Outcome[]) => outcomes.filter((outcome) => typeof outcome.status === 'number' && outcome.status < 300)
const errorsOf = (outcomes: readonly Outcome[]) => outcomes.filter((outcome) => outcome.busy !== true && (outcome.status === 'refused' || outcome.status >= 300))
const busyOf = (outcomes: readonly Outcome[]) => outcomes.filter((outcome) => outcome.busy === true)

console.log(`engram serve: ${counts.join(', ')} clients of ${users.length} users, ${seconds} s each (the first ${warmupMs / 1000} s not counted), over loopback HTTP (${workers} server processes, serve.requestsInWork ${values['in-work'] ?? 'default'}, serve.requestsQueued ${values.queued ?? 'default'}) and in-process; Node ${process.version}`)
console.log('| clients | how | answers/s | server CPU / wall (cores) | answers per CPU-s (per core) | begin p50 / p95 ms | errors | busy refusals | refusal p95 ms |')
console.log('|---|---|---|---|---|---|---|---|---|')
for (const [i, clients] of counts.entries()) {
  for (const [how, measure] of [['in-process (baseline)', baselines[i]], ['HTTP', overHttp[i]]] as const) {
    if (!measure) continue
    const outcomes = counted(measure)
    const ok = answered(outcomes)
    const begins = ok.filter((outcome) => outcome.route === 'turns/begin').map((outcome) => outcome.ms)
    const busy = busyOf(outcomes)
    const cores = measure.cpuMs / 1000 / countedSeconds
    console.log(
      `| ${clients} | ${how} | ${(ok.length / countedSeconds).toFixed(1)} | ${cores.toFixed(2)} | ${(ok.length / (measure.cpuMs / 1000)).toFixed(1)} | ${ms(quantile(begins, 0.5))} / ${ms(quantile(begins, 0.95))} | ${errorsOf(outcomes).length} | ${busy.length} | ${ms(quantile(busy.map((outcome) => outcome.ms), 0.95))} |`,
    )
  }
}

console.log('\nWhere the CPU went over HTTP, cores (CPU s per wall s): the server (its first process alone), the clients (this process).')
for (const [i, clients] of counts.entries()) {
  const measure = overHttp[i] as Measured
  const cores = (cpu: number | undefined) => ((cpu ?? Number.NaN) / 1000 / countedSeconds).toFixed(2)
  console.log(`- ${clients} clients: server ${cores(measure.cpuMs)} (first process ${cores(measure.firstCpuMs)}), clients ${cores(measure.clientsCpuMs)}`)
}

console.log('\n| clients | route over HTTP | answered | p50 ms | p95 ms | p99 ms |')
console.log('|---|---|---|---|---|---|')
for (const [i, clients] of counts.entries()) {
  const outcomes = answered(counted(overHttp[i] as Measured))
  for (const route of ROUTES) {
    const samples = outcomes.filter((outcome) => outcome.route === route).map((outcome) => outcome.ms)
    console.log(`| ${clients} | ${route} | ${samples.length} | ${ms(quantile(samples, 0.5))} | ${ms(quantile(samples, 0.95))} | ${ms(quantile(samples, 0.99))} |`)
  }
}
const failures = [...overHttp, ...baselines].flatMap((measure) => measure.run.failures.filter((failure) => !/ 503: /.test(failure)))
const errors = [...overHttp, ...baselines].reduce((sum, measure) => sum + errorsOf(measure.run.outcomes).length, 0)
if (errors > 0) console.log(`\n${errors} errors in all; the first:\n${failures.slice(0, 10).join('\n')}`)
