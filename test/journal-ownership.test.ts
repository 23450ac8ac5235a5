/**
 * Journal ownership (docs/decisions/0018) through `createMind` → `mind.session` →
 * `session.stream`, with real processes: another process opening the home leaves a live stream
 * alone; a stream whose writer was SIGKILLed is recovered exactly once, tool calls included, even
 * when several processes open the home at once; concurrent streams of one mind have their own
 * journals; a recoverer that dies half-way neither loses nor doubles the text.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ManualClock } from '../src/core/clock.ts'
import type { StoredMessage } from '../src/core/message.ts'
import { createJournals } from '../src/memory/journal/journal-folder.ts'
import type { RecoveryOutcome } from '../src/memory/journal/recover-orphans.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { runChild } from '../src/storage/files/test-support/run-children.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'
import { z } from 'zod'

const WRITER = fileURLToPath(new URL('./support/journal-stream-writer.ts', import.meta.url))
const OPENER = fileURLToPath(new URL('./support/open-home.ts', import.meta.url))

interface Writer {
  child: ChildProcess
  chunks: string[]
  ready: Promise<{ stream: string; turn: number }>
  exited: Promise<number | null>
  stderr(): string
}

function startWriter(home: string, sessionId: string, user: string): Writer {
  const child = spawn(process.execPath, [WRITER, home, sessionId, user, '15'], { stdio: ['pipe', 'pipe', 'pipe'] })
  const chunks: string[] = []
  let stderr = ''
  let pending = ''
  let onReady: (value: { stream: string; turn: number }) => void = () => {}
  const ready = new Promise<{ stream: string; turn: number }>((resolve) => {
    onReady = resolve
  })
  child.stderr!.on('data', (data: Buffer) => {
    stderr += data.toString()
  })
  child.stdout!.on('data', (data: Buffer) => {
    pending += data.toString()
    const parts = pending.split('\n')
    pending = parts.pop() ?? ''
    for (const part of parts) {
      const value = JSON.parse(part) as { ready?: boolean; stream?: string; turn?: number; chunk?: string }
      if (value.ready) onReady({ stream: value.stream!, turn: value.turn! })
      else if (value.chunk !== undefined) chunks.push(value.chunk)
    }
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, chunks, ready, exited, stderr: () => stderr }
}

/** Waits until the writer has streamed for a while: more than a second, so text is on disk. */
async function streaming(writer: Writer, chunks = 100): Promise<{ stream: string; turn: number }> {
  const ready = await Promise.race([writer.ready, writer.exited.then((code) => assert.fail(`writer exited ${code}: ${writer.stderr()}`))])
  const started = Date.now()
  while (writer.chunks.length < chunks && Date.now() - started < 20_000) await sleep(20)
  assert.ok(writer.chunks.length >= chunks, `the writer streamed only ${writer.chunks.length} chunks: ${writer.stderr()}`)
  return ready
}

async function kill(writer: Writer): Promise<void> {
  writer.child.kill('SIGKILL')
  await writer.exited
}

async function openElsewhere(home: string): Promise<Array<{ stream: string; outcome: RecoveryOutcome }>> {
  const { stdout } = await runChild(OPENER, [home])
  return JSON.parse(stdout) as Array<{ stream: string; outcome: RecoveryOutcome }>
}

async function conversation(mind: Mind, sessionId: string): Promise<StoredMessage[]> {
  const found = await mind.backend.context.findConversation(sessionId, mind.agent)
  assert.ok(found, `conversation ${sessionId}`)
  return mind.backend.context.messages(found.id)
}

function journalFiles(home: string, folder: string): string[] {
  const dir = join(home, 'agents/default/journal', folder)
  return existsSync(dir) ? readdirSync(dir).sort() : []
}

const open = (home: string, clock?: ManualClock) => createMind({ home, env: { ENGRAM_EMBED_MODEL: 'hash-v1' }, ignoreConfigFile: true, ...(clock ? { clock } : {}) })

describe('journal ownership', () => {
  it('with the writer alive, another process opens the home: nothing recovered, and the turn ends with one reply', { timeout: 120_000 }, async (t) => {
    const tmp = makeTempHome('engram-journal-alive-')
    t.after(tmp.cleanup)
    const writer = startWriter(tmp.home, 'deploy', 'ada')
    t.after(() => writer.child.kill('SIGKILL'))
    const { stream } = await streaming(writer)

    assert.deepEqual(await openElsewhere(tmp.home), [], 'a live stream is not a crash leftover')
    const here = await open(tmp.home)
    assert.deepEqual(here.recoveredJournals, [])
    assert.deepEqual(journalFiles(tmp.home, 'streams'), [`${stream}.jsonl`], 'the stream is still where its writer writes it')
    assert.deepEqual(journalFiles(tmp.home, 'recovering'), [])

    writer.child.stdin!.write('end\n')
    assert.equal(await writer.exited, 0, writer.stderr())
    const messages = await conversation(here, 'deploy')
    assert.deepEqual(
      messages.map((message) => [message.role, message.meta?.recovered ?? false]),
      [
        ['user', false],
        ['assistant', false],
      ],
      'the reply is stored once, by its writer; no duplicate partial message',
    )
    assert.equal(messages[1]?.content, writer.chunks.length > 0 ? `Let me look. ${writer.chunks.join('')}` : '')
    assert.deepEqual(journalFiles(tmp.home, 'streams'), [], 'the writer finalized its journal')
    await here.close()
    const later = await open(tmp.home)
    assert.deepEqual(later.recoveredJournals, [])
    await later.close()
  })

  it('with the writer SIGKILLed mid-stream, the next open recovers it exactly once, with the tool calls it made', { timeout: 120_000 }, async (t) => {
    const tmp = makeTempHome('engram-journal-killed-')
    t.after(tmp.cleanup)
    const writer = startWriter(tmp.home, 'deploy', 'ada')
    const { stream, turn } = await streaming(writer)
    await kill(writer)

    const first = await openElsewhere(tmp.home)
    assert.equal(first.length, 1)
    assert.equal(first[0]?.stream, stream)
    assert.equal(first[0]?.outcome.kind, 'stored')
    assert.deepEqual(await openElsewhere(tmp.home), [], 'recovered once: the next open finds nothing')

    const mind = await open(tmp.home)
    assert.deepEqual(mind.recoveredJournals, [])
    const messages = await conversation(mind, 'deploy')
    assert.deepEqual(
      messages.map((message) => message.role),
      ['user', 'assistant'],
    )
    assert.equal(messages[0]?.id, turn)
    const recovered = messages[1]!
    const written = `Let me look. ${writer.chunks.join('')}`
    assert.ok(recovered.content.length > 'Let me look. '.length && written.startsWith(recovered.content), 'the recovered text is what was streamed, in order')
    assert.deepEqual(
      { ...recovered.meta, toolCalls: undefined },
      { recovered: true, finished: false, stream, journal: `recovered/${stream}.jsonl`, toolCalls: undefined },
    )
    const calls = recovered.meta?.toolCalls as Array<Record<string, unknown>>
    assert.deepEqual(
      calls.map((call) => [call.tool, call.input, call.completed, call.ok, call.result]),
      [
        ['lookup', '{"q":"deploy"}', true, true, 'found 3 lines about deploy'],
        ['tail_log', '{"q":"deploy"}', false, undefined, undefined],
      ],
    )
    assert.deepEqual(journalFiles(tmp.home, 'streams'), [])
    assert.deepEqual(journalFiles(tmp.home, 'recovering'), [])
    assert.deepEqual(journalFiles(tmp.home, 'recovered'), [`${stream}.jsonl`], 'the journal is kept')
    await mind.close()
  })

  it('three processes opening the home at once after a crash of two writers recover each stream exactly once', { timeout: 120_000 }, async (t) => {
    const tmp = makeTempHome('engram-journal-race-')
    t.after(tmp.cleanup)
    const writers = [startWriter(tmp.home, 's1', 'ada'), startWriter(tmp.home, 's2', 'bob')]
    const streams = await Promise.all(writers.map((writer) => streaming(writer, 60)))
    await Promise.all(writers.map(kill))

    const results = await Promise.all([openElsewhere(tmp.home), openElsewhere(tmp.home), openElsewhere(tmp.home)])
    const stored = results.flat().filter((result) => result.outcome.kind === 'stored')
    assert.deepEqual(stored.map((result) => result.stream).sort(), streams.map((s) => s.stream).sort(), JSON.stringify(results))

    const mind = await open(tmp.home)
    for (const sessionId of ['s1', 's2']) {
      const messages = await conversation(mind, sessionId)
      assert.deepEqual(
        messages.map((message) => [message.role, message.meta?.recovered ?? false]),
        [
          ['user', false],
          ['assistant', true],
        ],
        `${sessionId}: one recovered reply`,
      )
      assert.match(messages[1]!.content, new RegExp(`^Let me look\\. ${sessionId} chunk 00001; `), 'each stream recovered into its own conversation')
    }
    assert.deepEqual(journalFiles(tmp.home, 'recovered').length, 2)
    await mind.close()
  })

  it('two sessions streaming at once in one mind each have their own journal, with their own tool calls, and both finalize', async (t) => {
    const tmp = makeTempHome('engram-journal-concurrent-')
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const lookup: ToolDefinition<{ q: string }> = { name: 'lookup', description: 'Look something up', inputSchema: z.object({ q: z.string() }), run: async ({ q }) => ({ text: `about ${q}` }) }
    const tools = [lookup as ToolDefinition<unknown>]
    const mind = await open(tmp.home, clock)
    const ada = mind.session('a', { user: 'ada', tools })
    const bob = mind.session('b', { user: 'bob', tools })
    const adaTurn = await ada.begin('Hello from Ada')
    const bobTurn = await bob.begin('Hello from Bob')
    const adaStream = ada.stream(adaTurn)
    const bobStream = bob.stream(bobTurn)
    adaStream.write('Hi Ada, ')
    bobStream.write('Hi Bob, ')
    await ada.execute('lookup', { q: 'ada' })
    adaStream.write('done.')
    bobStream.write('done.')

    const files = journalFiles(tmp.home, 'streams')
    assert.equal(files.length, 2, 'one file per stream')
    // Another mind opened meanwhile (here in the same process) leaves both alone.
    const other = await open(tmp.home, clock)
    assert.deepEqual(other.recoveredJournals, [])
    await other.close()
    for (const journal of [mind.journals.find({ sessionId: 'a' })!, mind.journals.find({ sessionId: 'b' })!]) journal.flush()
    const read = (sessionId: string) =>
      files
        .map((name) => readFileSync(join(tmp.home, 'agents/default/journal/streams', name), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>))
        .find((lines) => lines[0]?.session === sessionId)!
    assert.deepEqual(
      read('a').map((line) => line.text ?? line.tool ?? line.type),
      ['start', 'Hi Ada, ', 'lookup', 'lookup', 'done.'],
    )
    assert.deepEqual(read('a')[0]?.from, 'ada')
    assert.deepEqual(
      read('b').map((line) => line.text ?? line.type),
      ['start', 'Hi Bob, done.'],
    )

    await ada.end(adaTurn, 'Hi Ada, done.')
    assert.equal(journalFiles(tmp.home, 'streams').length, 1, "ending Ada's turn leaves Bob's stream alone")
    // A host may end a turn on a new session object (one per call): the turn's journal is still found.
    await mind.session('b', { user: 'bob' }).end(bobTurn, 'Hi Bob, done.')
    assert.deepEqual(journalFiles(tmp.home, 'streams'), [])
    await mind.close()

    const reopened = await open(tmp.home, clock)
    assert.deepEqual(reopened.recoveredJournals, [])
    for (const sessionId of ['a', 'b']) {
      assert.deepEqual(
        (await conversation(reopened, sessionId)).map((message) => message.role),
        ['user', 'assistant'],
      )
    }
    await reopened.close()
  })

  it('a recoverer that dies half-way: a claimed journal is stored at the next open, and a stored one is not stored again', async (t) => {
    const tmp = makeTempHome('engram-journal-recoverer-')
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const journalDir = join(tmp.home, 'agents/default/journal')
    const mind = await open(tmp.home, clock)
    const session = mind.session('plan', { user: 'ada' })
    const stream = session.stream(await session.begin('What is the plan?'))
    stream.write('First we tag the release, then we push it.')
    await mind.close()

    // A recoverer claims the orphan and dies before storing it.
    const claimed = createJournals({ dir: journalDir, clock }).claimOrphans()
    assert.equal(claimed.length, 1)
    const second = await open(tmp.home, clock)
    assert.equal(second.recoveredJournals.length, 1)
    const outcome = second.recoveredJournals[0]!.outcome
    assert.equal(outcome.kind, 'stored')
    await second.close()

    // A recoverer stored it and died before moving the file on: the file is back in recovering/.
    const id = claimed[0]!.id
    copyFileSync(join(journalDir, 'recovered', `${id}.jsonl`), join(journalDir, 'recovering', `${id}.jsonl`))
    const third = await open(tmp.home, clock)
    assert.deepEqual(
      third.recoveredJournals.map((journal) => journal.outcome),
      [{ kind: 'already-stored', conversationId: outcome.kind === 'stored' ? outcome.conversationId : -1, messageId: outcome.kind === 'stored' ? outcome.messageId : -1 }],
    )
    const messages = await conversation(third, 'plan')
    assert.deepEqual(
      messages.map((message) => [message.role, message.content]),
      [
        ['user', 'What is the plan?'],
        ['assistant', 'First we tag the release, then we push it.'],
      ],
    )
    assert.deepEqual(journalFiles(tmp.home, 'recovering'), [])
    assert.deepEqual(journalFiles(tmp.home, 'recovered'), [`${id}-2.jsonl`, `${id}.jsonl`], 'both copies kept')
    await third.close()
  })
})
