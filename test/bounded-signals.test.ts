/**
 * A 10 MB message without spaces, in a real agent process (test/support/long-message-turn.ts) and
 * through the real CLI: refused by default with the limit, stored with bounded memory once the
 * limit is raised, and SIGTERM sent while it is being processed stops the process at once (before
 * decision 0026, counting its tokens took more than ten minutes and the signal waited for it). The
 * thresholds are a generous watchdog for a shared machine; `npm run bench -- robustness` measures.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { makeTempHome } from '../src/testing/temp-home.ts'

const root = resolve(import.meta.dirname, '..')
const turnScript = fileURLToPath(new URL('./support/long-message-turn.ts', import.meta.url))
const bin = join(root, 'src/interfaces/cli/bin.ts')
const TEN_MB = 10_000_000

interface Run {
  child: ChildProcess
  lines: Array<Record<string, unknown>>
  /** Resolves when a printed line has this key. */
  printed(key: string): Promise<void>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>
}

function start(args: string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env, cwd: root })
  const lines: Array<Record<string, unknown>> = []
  const waiting = new Map<string, () => void>()
  let buffer = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    const complete = buffer.split('\n')
    buffer = complete.pop() ?? ''
    for (const line of complete) {
      if (line.trim() === '') continue
      const value = JSON.parse(line) as Record<string, unknown>
      lines.push(value)
      for (const [key, resolveKey] of waiting) if (key in value) resolveKey()
    }
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolveExit) =>
    child.on('exit', (code, signal) => {
      if (code !== 0 && code !== null && signal === null && stderr !== '') process.stderr.write(stderr)
      for (const resolveKey of waiting.values()) resolveKey()
      resolveExit({ code, signal, at: performance.now() })
    }),
  )
  const printed = (key: string): Promise<void> =>
    lines.some((line) => key in line) ? Promise.resolve() : new Promise((resolveKey) => waiting.set(key, resolveKey))
  return { child, lines, printed, exited }
}

test('a 10 MB message without spaces: refused by default with the limit; stored with bounded memory when the limit is raised', async (t) => {
  const temp = makeTempHome('engram-bounded-turn-')
  t.after(temp.cleanup)
  const refused = start([turnScript, join(temp.home, 'default'), String(TEN_MB), 'nospace'], temp.env)
  await refused.exited
  const answer = refused.lines.find((line) => 'refused' in line)
  assert.equal(answer?.refused, 'limit_exceeded', JSON.stringify(refused.lines))
  assert.match(String(answer?.message), /over the limit of 4,000,000 \(limits\.messageChars\)[\s\S]*ENGRAM_MAX_MESSAGE_CHARS/)

  const stored = start([turnScript, join(temp.home, 'raised'), String(TEN_MB), 'nospace', String(TEN_MB)], temp.env)
  await stored.exited
  const done = stored.lines.find((line) => 'stored' in line)
  assert.ok(done, JSON.stringify(stored.lines))
  assert.ok(Number(done.ms) < 20_000, `begin took ${done.ms} ms`)
  // The process holds the message a few times over (its text, the stored row, the passages being
  // indexed), never the quadratic blow-up of before: about 350 MB measured, 1 GB is the watchdog.
  assert.ok(Number(done.maxRssMB) < 1_024, `peak RSS ${done.maxRssMB} MB`)
  assert.ok(stored.lines.some((line) => 'closed' in line))
})

test('SIGTERM while session.begin processes a 10 MB message without spaces stops the process at once', async (t) => {
  const temp = makeTempHome('engram-bounded-sigterm-')
  t.after(temp.cleanup)
  for (const after of [20, 250]) {
    const run = start([turnScript, join(temp.home, `h${after}`), String(TEN_MB), 'nospace', String(TEN_MB)], temp.env)
    await run.printed('begin')
    await new Promise((resolveDelay) => setTimeout(resolveDelay, after))
    const sent = performance.now()
    run.child.kill('SIGTERM')
    const { signal, code, at } = await run.exited
    assert.ok(!run.lines.some((line) => 'stored' in line), `killed ${after} ms into begin, it should still have been working`)
    assert.ok(signal === 'SIGTERM' || code === 143, `exit ${code} ${signal}`)
    assert.ok(at - sent < 3_000, `stopped ${Math.round(at - sent)} ms after SIGTERM`)
  }
})

test('SIGTERM while `engram context append` stores a 10 MB message stops the CLI at once', async (t) => {
  const temp = makeTempHome('engram-bounded-cli-sigterm-')
  t.after(temp.cleanup)
  const file = join(temp.project, 'big.jsonl')
  mkdirSync(temp.project, { recursive: true })
  writeFileSync(file, `${JSON.stringify({ role: 'user', content: 'q'.repeat(TEN_MB - 7) + 'zuvwxyk' })}\n`)
  const args = [bin, 'context', 'append', '--home', temp.home, '--session', 's', '--file', file, '--set', `limits.messageChars=${TEN_MB}`, '--json']
  // One run to the end: how long the whole command takes here.
  const whole = start(args, temp.env)
  const begun = performance.now()
  const finished = await whole.exited
  assert.equal(finished.code, 0)
  const duration = finished.at - begun
  // Then killed in the second half of its run, while it stores and indexes the message.
  const run = start([...args.slice(0, 6), 's2', ...args.slice(7)], temp.env)
  const spawned = performance.now()
  await new Promise((resolveDelay) => setTimeout(resolveDelay, duration * 0.6))
  const sent = performance.now()
  run.child.kill('SIGTERM')
  const { signal, code, at } = await run.exited
  if (code === 0) t.diagnostic(`the command finished before the signal (${Math.round(sent - spawned)} ms of ${Math.round(duration)})`)
  else {
    assert.ok(signal === 'SIGTERM' || code === 143, `exit ${code} ${signal}`)
    assert.ok(at - sent < 3_000, `stopped ${Math.round(at - sent)} ms after SIGTERM`)
  }
})

test('SIGTERM while `engram mcp` reads a 10 MB tool call stops the server at once, closing cleanly', async (t) => {
  const temp = makeTempHome('engram-bounded-mcp-sigterm-')
  t.after(temp.cleanup)
  const child = spawn(process.execPath, [bin, 'mcp', '--home', temp.home], { stdio: ['pipe', 'pipe', 'pipe'], env: temp.env, cwd: root })
  child.stdin?.on('error', () => {})
  let out = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<{ code: number | null; at: number }>((resolveExit) => child.on('exit', (code) => resolveExit({ code, at: performance.now() })))
  const send = (message: unknown): void => {
    child.stdin?.write(`${JSON.stringify(message)}\n`)
  }
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bounded-test', version: '1' } } })
  while (!out.includes('"id":1')) await new Promise((resolveWait) => setTimeout(resolveWait, 20))
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write_memory_file', arguments: { path: 'knowledge/big.md', content: 'x'.repeat(TEN_MB) } } })
  await new Promise((resolveDelay) => setTimeout(resolveDelay, 100))
  const sent = performance.now()
  child.kill('SIGTERM')
  const { code, at } = await exited
  assert.ok(at - sent < 3_000, `stopped ${Math.round(at - sent)} ms after SIGTERM`)
  assert.equal(code, 0, stderr)
  assert.match(stderr, /engram mcp: session ended \(signal\)/)
})
