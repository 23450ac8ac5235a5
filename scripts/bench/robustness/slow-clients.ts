/**
 * Benchmark (decision 0056): one client trickling 200 connections at `engram
 * serve` with its default settings — half sending headers a line every 200 ms, half a body a byte
 * every 200 ms — while a well-behaved client of the same address and one of another ask for
 * `/v1/health` every 500 ms. Measured: how many connections the server refuses and how soon, when
 * it closes the ones it held, and how long the well-behaved requests take meanwhile.
 *
 * Baseline, same run: the same flood at a `node:http` server with Node's defaults (what `engram
 * serve` had before): how many of the 200 are still open when the run ends.
 *
 * Run on its own: `node scripts/bench/robustness/slow-clients.ts [--connections 200] [--observe 40]`
 * (through `scripts/run.sh node …`); `npm run bench -- robustness` runs it with the others.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { startServe } from '../../../test/support/serve-process.ts'
import { type Answer, closedWithin, connected, send, sleep, statusOf, type Trickle, trickle } from '../../../test/support/slow-clients.ts'

export interface SlowClientsOptions {
  /** Trickling connections of the one client (default 200). */
  connections?: number
  /** Seconds the run watches the connections (default 40, the measurement). */
  observe?: number
}

interface Flood {
  refusedAtOnce: number
  refusedLater: number
  answered408: number
  headersHeldMs: number
  bodyHeldMs: number
  openAtEnd: number
}

/** Opens the flood from 127.0.0.2, watches it for `observeMs`, and sorts what happened to each connection. */
async function flood(port: number, count: number, observeMs: number, token?: string): Promise<Flood> {
  const kinds = Array.from({ length: count }, (_, i): 'headers' | 'body' => (i % 2 === 0 ? 'headers' : 'body'))
  const connections: Trickle[] = kinds.map((kind) => trickle(port, kind, { localAddress: '127.0.0.2', ...(token ? { token } : {}) }))
  await Promise.all(connections.map(connected))
  const ends = await Promise.all(connections.map((connection) => closedWithin(connection, observeMs)))
  const result: Flood = { refusedAtOnce: 0, refusedLater: 0, answered408: 0, headersHeldMs: 0, bodyHeldMs: 0, openAtEnd: 0 }
  ends.forEach((end, i) => {
    if (!end) {
      result.openAtEnd++
      connections[i]?.socket.destroy()
      return
    }
    const status = statusOf(end.answer)
    if (status === 429 || status === 503) {
      if (end.afterMs < 100) result.refusedAtOnce++
      else result.refusedLater++
      return
    }
    if (status === 408) result.answered408++
    if (kinds[i] === 'headers') result.headersHeldMs = Math.max(result.headersHeldMs, end.afterMs)
    else result.bodyHeldMs = Math.max(result.bodyHeldMs, end.afterMs)
  })
  return result
}

/** `/v1/health` every 500 ms from `localAddress` until `until` resolves. */
async function wellBehaved(port: number, localAddress: string, until: Promise<unknown>): Promise<Answer[]> {
  let done = false
  void until.then(() => (done = true))
  const answers: Answer[] = []
  await sleep(200)
  while (!done) {
    answers.push(await send(port, '/v1/health', { localAddress }).catch((error: Error) => ({ status: 0, connection: undefined, body: error.message, ms: 0 })))
    await sleep(500)
  }
  return answers
}

const seconds = (ms: number) => (ms / 1000).toFixed(1)

function summary(answers: Answer[]): string {
  const ok = answers.filter((answer) => answer.status === 200)
  return `${ok.length} of ${answers.length} 200, slowest ${Math.round(Math.max(0, ...ok.map((answer) => answer.ms)))} ms`
}

export async function run(options: SlowClientsOptions = {}): Promise<string> {
  const count = options.connections ?? 200
  const observeMs = (options.observe ?? 40) * 1000
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-slow-'))
  const server = await startServe({ home: join(dir, 'home'), env: { HOME: dir, PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' }, killAfterMs: observeMs + 120_000 })
  // Node's defaults, the body read before answering, as the API does.
  const baseline = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.end('{}'))
  })
  await new Promise<void>((resolve) => baseline.listen(0, '127.0.0.1', resolve))
  try {
    const port = Number(new URL(server.address).port)
    const served = flood(port, count, observeMs)
    const [engram, same, other, before] = await Promise.all([
      served,
      wellBehaved(port, '127.0.0.2', served),
      wellBehaved(port, '127.0.0.3', served),
      flood((baseline.address() as AddressInfo).port, count, observeMs),
    ])
    const row = (name: string, f: Flood, requests: string) =>
      `| ${name} | ${f.refusedAtOnce} / ${f.refusedLater} | ${f.answered408} | ${f.headersHeldMs ? seconds(f.headersHeldMs) : '–'} | ${f.bodyHeldMs ? seconds(f.bodyHeldMs) : '–'} | ${f.openAtEnd} | ${requests} |`
    return [
      `${count} connections of one client, half trickling headers, half a body; watched ${seconds(observeMs)} s.`,
      '',
      '| server | refused at once / within 1 s | answered 408 | longest held, headers trickle s | longest held, body trickle s | open at the end | /v1/health every 500 ms during the flood |',
      '|---|---|---|---|---|---|---|',
      row('engram serve, default settings', engram, `same client: ${summary(same)}; another: ${summary(other)}`),
      row("baseline: node:http with Node's defaults", before, '–'),
    ].join('\n')
  } finally {
    baseline.closeAllConnections()
    baseline.close()
    await server.stop('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { connections: { type: 'string' }, observe: { type: 'string' } } })
  console.log(await run({ ...(values.connections ? { connections: Number(values.connections) } : {}), ...(values.observe ? { observe: Number(values.observe) } : {}) }))
}
