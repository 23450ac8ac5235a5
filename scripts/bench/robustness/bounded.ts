/**
 * Benchmark: bounded work for any input (decision 0026). A user sends one very long
 * message: how long `session.begin` takes to store, count and index it, how much memory the process
 * needs, how long the event loop is ever held, and how soon SIGTERM sent in the middle stops the
 * process — each in a fresh child process (test/support/long-message-turn.ts), beside a floor
 * measured on the same input in the same process: JSON.stringify and Buffer.byteLength of it.
 * Also `engram mcp` sent SIGTERM while it reads a 10 MB tool call, and token counting alone.
 *
 * Run on its own: `node scripts/bench/robustness/bounded.ts [--mb 10] [--kills 3]`; the robustness
 * bench calls `run()`, which returns the markdown table.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { countTokens } from '../../../src/core/tokens.ts'

const turnScript = fileURLToPath(new URL('../../../test/support/long-message-turn.ts', import.meta.url))
const bin = fileURLToPath(new URL('../../../src/interfaces/cli/bin.ts', import.meta.url))

export interface BoundedBenchOptions {
  /** Size of the long message, in millions of characters (default 10). */
  mb?: number
  /** SIGTERM trials per input (default 3); the table gives the slowest. */
  kills?: number
}

type Line = Record<string, number | string | boolean>

interface Child {
  lines: Line[]
  /** Resolves once a line with `key` was printed (or the child exited). */
  printed(key: string): Promise<void>
  kill(): number
  exited: Promise<{ code: number | null; signal: string | null; at: number }>
}

function child(args: string[], env: Record<string, string>): Child {
  const process_ = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env })
  const lines: Line[] = []
  const waiting: Array<[string, () => void]> = []
  let buffer = ''
  process_.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    const complete = buffer.split('\n')
    buffer = complete.pop() ?? ''
    for (const text of complete) {
      if (text.trim() === '') continue
      const line = JSON.parse(text) as Line
      lines.push(line)
      for (const [key, resolveKey] of waiting) if (key in line) resolveKey()
    }
  })
  const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((resolveExit) =>
    process_.on('exit', (code, signal) => {
      for (const [, resolveKey] of waiting) resolveKey()
      resolveExit({ code, signal, at: performance.now() })
    }),
  )
  return {
    lines,
    printed: (key) => (lines.some((line) => key in line) ? Promise.resolve() : new Promise((resolveKey) => waiting.push([key, resolveKey]))),
    kill: () => {
      process_.kill('SIGTERM')
      return performance.now()
    },
    exited,
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolveSleep) => setTimeout(resolveSleep, ms))
const mb = (value: unknown): string => (value === undefined ? '—' : `${value} MB`)
const seconds = (ms: unknown): string => (typeof ms === 'number' ? (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms} ms`) : '—')

/** One `session.begin` of a long message in a fresh process; or, with `killAfter`, SIGTERM that many ms into it. */
async function turn(home: string, env: Record<string, string>, size: number, kind: 'nospace' | 'spaces', limit?: number, killAfter?: number): Promise<{ lines: Line[]; signalDelayMs?: number; stopped?: boolean }> {
  const run = child([turnScript, home, String(size), kind, ...(limit === undefined ? [] : [String(limit)])], env)
  if (killAfter === undefined) {
    await run.exited
    return { lines: run.lines }
  }
  await run.printed('begin')
  await sleep(killAfter)
  const sent = run.kill()
  const { at } = await run.exited
  return { lines: run.lines, signalDelayMs: Math.round(at - sent), stopped: !run.lines.some((line) => 'stored' in line) }
}

/** SIGTERM to `engram mcp` while it reads a tool call of `size` characters: ms until it exited. */
async function mcpSignal(home: string, env: Record<string, string>, size: number): Promise<number> {
  const server = spawn(process.execPath, [bin, 'mcp', '--home', home], { stdio: ['pipe', 'pipe', 'ignore'], env })
  server.stdin.on('error', () => {})
  let out = ''
  server.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  const exited = new Promise<number>((resolveExit) => server.on('exit', () => resolveExit(performance.now())))
  const send = (message: unknown): void => {
    server.stdin.write(`${JSON.stringify(message)}\n`)
  }
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })
  while (!out.includes('"id":1')) await sleep(10)
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write_memory_file', arguments: { path: 'knowledge/big.md', content: 'x'.repeat(size) } } })
  await sleep(100)
  const sent = performance.now()
  server.kill('SIGTERM')
  return Math.round((await exited) - sent)
}

/** The benchmark; returns its markdown table. */
export async function run(options: BoundedBenchOptions = {}): Promise<string> {
  const size = Math.round((options.mb ?? 10) * 1_000_000)
  const kills = options.kills ?? 3
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-bounded-'))
  const env = { HOME: dir, PATH: process.env.PATH ?? '' }
  let homes = 0
  const home = (): string => join(dir, `home-${homes++}`)
  const rows: string[] = []
  try {
    const label = `${(size / 1_000_000).toLocaleString('en-US')} MB`
    for (const kind of ['nospace', 'spaces'] as const) {
      const what = `${label} ${kind === 'nospace' ? 'without a space' : 'of words'}`
      const stored = await turn(home(), env, size, kind, size)
      const done = stored.lines.find((line) => 'stored' in line) ?? {}
      const begun = stored.lines.find((line) => 'begin' in line) ?? {}
      let slowest = 0
      let interrupted = 0
      for (let i = 0; i < kills; i++) {
        // Spread over the first 60% of a begin (a killed run is no faster than the measured one).
        const at = Math.round((Number(done.ms ?? 500) * 0.6 * (i + 0.5)) / kills)
        const killed = await turn(home(), env, size, kind, size, at)
        slowest = Math.max(slowest, killed.signalDelayMs ?? 0)
        if (killed.stopped) interrupted++
      }
      rows.push(
        `| ${what}, limit raised | session.begin: stored whole, ${done.units ?? '?'} passages indexed | ${seconds(done.ms)} | ${mb(done.maxRssMB)} (text built: ${mb(begun.rssBeforeMB)}) | ${seconds(done.blockedMs)} | ${seconds(slowest)} (${interrupted} of ${kills} stopped mid-begin) |`,
      )
      rows.push(`| ${what} | baseline: JSON.stringify + Buffer.byteLength of it | ${seconds(begun.baselineMs)} | — | — | — |`)
      if (kind === 'nospace') {
        const refused = await turn(home(), env, size, kind)
        const answer = refused.lines.find((line) => 'refused' in line) ?? {}
        rows.push(`| ${what}, default limit | session.begin: refused (${answer.refused ?? '?'}, limits.messageChars) | ${seconds(answer.ms)} | — | — | — |`)
      }
    }
    const small = await turn(home(), env, 1_000_000, 'spaces')
    const smallDone = small.lines.find((line) => 'stored' in line) ?? {}
    rows.push(`| 1 MB of words, default limit | session.begin: stored, ${smallDone.units ?? '?'} passages | ${seconds(smallDone.ms)} | ${mb(smallDone.maxRssMB)} | ${seconds(smallDone.blockedMs)} | — |`)

    const mcpDelay = await mcpSignal(home(), env, size)
    rows.push(`| ${label} tool call to engram mcp | SIGTERM while the server reads it | — | — | — | ${seconds(mcpDelay)} |`)

    countTokens('warm up')
    for (const [what, text] of [
      [`${label}, one letter repeated`, 'x'.repeat(size)],
      [`${label} of random letters`, Buffer.from(Array.from({ length: size }, (_, i) => 97 + ((i * 7_919 + ((i * i) >>> 7)) % 26))).toString('latin1')],
    ] as const) {
      const started = performance.now()
      const tokens = countTokens(text)
      const ms = Math.round(performance.now() - started)
      const floor = performance.now()
      Buffer.byteLength(text, 'utf8')
      const floorMs = Math.round(performance.now() - floor)
      rows.push(`| ${what} | countTokens alone (estimated: ${tokens.toLocaleString('en-US')}); baseline Buffer.byteLength ${seconds(floorMs)} | ${seconds(ms)} | — | — | — |`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return [
    `Bounded work for any input (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; each begin in a fresh process, hash-v1 embedder):`,
    '',
    '| input | what | time | peak RSS | longest event-loop block | SIGTERM → exit (slowest) |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { mb: { type: 'string', default: '10' }, kills: { type: 'string', default: '3' } } })
  console.log(await run({ mb: Number(values.mb), kills: Number(values.kills) }))
}
