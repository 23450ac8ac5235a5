// @slow: kills context writers with SIGKILL many times, and races two processes on one session
/**
 * Crash safety of the lossless context across processes: writers appending and compacting are
 * killed with SIGKILL many times; every acknowledged message must still be stored and the DAG must
 * be consistent afterwards, and every stored message indexed for search. And two processes appending to one session at once lose nothing and
 * keep each writer's order.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { checkContextConsistency } from '../src/memory/context/consistency.ts'
import { openEmbeddedBackend } from '../src/storage/embedded.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const writerScript = resolve(import.meta.dirname, '../src/memory/context/test-support/context-writer.ts')

interface Writer {
  child: ChildProcess
  acks: number[]
  firstAck: Promise<void>
  exited: Promise<number | null>
}

function startWriter(home: string, session: string, name: string, count: number, extra: string[]): Writer {
  const child = spawn(process.execPath, [writerScript, home, session, name, String(count), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
  const acks: number[] = []
  let buffer = ''
  let stderr = ''
  let signalFirst: () => void = () => {}
  const firstAck = new Promise<void>((resolveAck) => {
    signalFirst = resolveAck
  })
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    const lines = buffer.split('\n')
    buffer = lines.pop() ?? ''
    for (const line of lines) {
      const match = /^ack (\S+) (\d+)$/.exec(line)
      if (match) {
        acks.push(Number(match[2]))
        signalFirst()
      }
    }
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<number | null>((resolveExit) =>
    child.on('exit', (code) => {
      signalFirst()
      if (code !== 0 && code !== null) process.stderr.write(`writer ${name} exited ${code}: ${stderr}\n`)
      resolveExit(code)
    }),
  )
  return { child, acks, firstAck, exited }
}

test('SIGKILL during appends and compactions, 15 times: every acknowledged message survives, the DAG stays consistent', async (t) => {
  const tmp = makeTempHome('engram-crash-')
  t.after(tmp.cleanup)
  // Create the home's folders and schema once, as `engram init` would.
  await openEmbeddedBackend({ home: tmp.home, agent: 'default', clock: new ManualClock() }).close()

  const acknowledged: number[] = []
  let next = 0
  for (let round = 0; round < 15; round++) {
    const writer = startWriter(tmp.home, 'crashy', 'w', 100_000, ['--compact', '--start', String(next)])
    await writer.firstAck
    await new Promise((r) => setTimeout(r, 40 + ((round * 37) % 200)))
    writer.child.kill('SIGKILL')
    await writer.exited
    acknowledged.push(...writer.acks)
    // The next writer continues after the last number this one could have started, acknowledged or not.
    next = (writer.acks.at(-1) ?? next - 1) + 2
  }
  assert.ok(acknowledged.length >= 15, `writers made progress (${acknowledged.length} acks)`)

  const backend = openEmbeddedBackend({ home: tmp.home, agent: 'default', clock: new ManualClock() })
  t.after(() => backend.close())
  const conv = (await backend.context.findConversation('crashy', 'default'))!
  const stored = await backend.context.messages(conv.id)
  const numbers = stored.map((message) => Number(/^w (\d+):/.exec(message.content)?.[1]))
  for (const n of acknowledged) assert.ok(numbers.includes(n), `acknowledged message ${n} is stored`)
  for (let i = 1; i < numbers.length; i++) assert.ok(numbers[i]! > numbers[i - 1]!, 'stored in the order written')
  // Stored and indexed in one transaction (decision 0083): no kill leaves a stored message unindexed,
  // so search finds every message without catching up first.
  const indexed = await backend.index!.hashes(`conv:${conv.id}`)
  const unindexed = stored.filter((message) => !indexed.has(`msg:${message.id}`)).map((message) => message.seq)
  assert.deepEqual(unindexed, [], 'every stored message is in the search index')
  const report = await checkContextConsistency(backend.context, conv.id)
  assert.deepEqual(report.problems, [])
  assert.ok(report.summaries > 0, 'compactions happened between the kills')
})

test('two processes appending to one session at once lose nothing and keep each writer’s order', async (t) => {
  const tmp = makeTempHome('engram-two-writers-')
  t.after(tmp.cleanup)
  await openEmbeddedBackend({ home: tmp.home, agent: 'default', clock: new ManualClock() }).close()
  const a = startWriter(tmp.home, 'shared', 'a', 120, [])
  const b = startWriter(tmp.home, 'shared', 'b', 120, ['--compact'])
  assert.deepEqual(await Promise.all([a.exited, b.exited]), [0, 0])

  const backend = openEmbeddedBackend({ home: tmp.home, agent: 'default', clock: new ManualClock() })
  t.after(() => backend.close())
  const conv = (await backend.context.findConversation('shared', 'default'))!
  const stored = await backend.context.messages(conv.id)
  assert.equal(stored.length, 240)
  for (const writer of ['a', 'b']) {
    const mine = stored.filter((message) => message.content.startsWith(`${writer} `)).map((message) => Number(message.content.split(/[ :]/)[1]))
    assert.deepEqual(
      mine,
      Array.from({ length: 120 }, (_, i) => i),
      `writer ${writer}: all present, in order`,
    )
  }
  assert.deepEqual((await checkContextConsistency(backend.context, conv.id)).problems, [])
})
