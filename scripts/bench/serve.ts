/**
 * Benchmark: `engram serve` under many clients — the real server in a child process on loopback,
 * `--clients` clients (default 50) of `--users` users (default 4) for `--seconds` (default 60), each
 * beginning a turn, searching, ending the turn and every other round memorizing a lesson
 * (test/support/serve-clients.ts). Per route: requests, errors, p50/p95/p99; throughput.
 *
 * Baseline, measured in the same run: the same clients doing the same operations through the
 * library in-process (`createMind`, `session.begin/end`, the search and memorize tools) on a home
 * of their own, for as long. The difference is what HTTP costs: the socket, JSON both ways, the
 * token check, the route's own checks (the session's owner, the stored turn) and a second process
 * (which, on a machine with more than one core, also gives the server a core of its own). The
 * first `--warmup` seconds (default 5) of each are not counted.
 *
 * Run: `npm run bench -- serve [--clients N] [--seconds N] [--users N] [--warmup N]`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createMind } from '../../src/mind.ts'
import type { Turn } from '../../src/session/turn.ts'
import { type LoadRun, type Outcome, quantile, ROUTES, runClients, type Send, type ServeUser } from '../../test/support/serve-clients.ts'
import { startServe } from '../../test/support/serve-process.ts'

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '60' },
    users: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '5' },
  },
})
const clients = Number(values.clients)
const seconds = Number(values.seconds)
const warmupMs = Number(values.warmup) * 1000
const users: ServeUser[] = Array.from({ length: Number(values.users) }, (_, i) => ({ user: `user-${i}`, token: `bench-token-of-user-${i}-0123456789` }))
const dir = mkdtempSync(join(tmpdir(), 'engram-bench-serve-'))
const env = { HOME: dir, PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' }

// Through HTTP.
const server = await startServe({
  home: join(dir, 'served'),
  env: { ...env, ENGRAM_SERVE_TOKENS: users.map(({ user, token }) => `${token}=default:${user}`).join(',') },
  killAfterMs: (seconds + 300) * 1000,
})
const httpStarted = performance.now()
const overHttp = await runClients({ address: server.address, users, clients, running: () => performance.now() - httpStarted < seconds * 1000 })
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
const baselineStarted = performance.now()
const baseline = await runClients({ address: '', send: inProcess, users, clients, running: () => performance.now() - baselineStarted < seconds * 1000 })
await mind.close()
rmSync(dir, { recursive: true, force: true })

const ms = (value: number) => (Number.isNaN(value) ? '–' : value.toFixed(1))
const counted = (run: LoadRun, started: number) => run.outcomes.filter((outcome) => outcome.sentAt >= started + warmupMs)
const failed = (outcomes: readonly Outcome[]) => outcomes.filter((outcome) => outcome.status === 'refused' || outcome.status >= 300)
const row = (label: string, outcomes: readonly Outcome[]) => {
  const samples = outcomes.filter((outcome) => typeof outcome.status === 'number' && outcome.status < 300).map((outcome) => outcome.ms)
  const rate = samples.length / (seconds - warmupMs / 1000)
  return `| ${label} | ${outcomes.length} | ${rate.toFixed(1)} | ${outcomes.length - samples.length} | ${ms(quantile(samples, 0.5))} | ${ms(quantile(samples, 0.95))} | ${ms(quantile(samples, 0.99))} |`
}

console.log(`engram serve: ${clients} clients of ${users.length} users for ${seconds} s (the first ${warmupMs / 1000} s not counted), over loopback HTTP and in-process; Node ${process.version}`)
console.log('| route | requests | answered per s | errors | p50 ms | p95 ms | p99 ms |')
console.log('|---|---|---|---|---|---|---|')
for (const [how, run, started] of [['in-process', baseline, baselineStarted], ['HTTP', overHttp, httpStarted]] as const) {
  const outcomes = counted(run, started)
  const note = how === 'in-process' ? ' (baseline)' : ''
  for (const route of ROUTES) console.log(row(`${how} ${route}${note}`, outcomes.filter((outcome) => outcome.route === route)))
  console.log(row(`${how}, all${note}`, outcomes))
}
const errors = failed(overHttp.outcomes).length + failed(baseline.outcomes).length
const failures = [...overHttp.failures, ...baseline.failures]
if (errors > 0) console.log(`\n${errors} errors in all; the first:\n${failures.join('\n')}`)
