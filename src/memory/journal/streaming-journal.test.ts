import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ManualClock, systemClock } from '../../core/clock.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import { createJournals, LEGACY_JOURNAL_FILE, RECOVERED_DIR, RECOVERING_DIR, STREAMS_DIR } from './journal-folder.ts'
import { thisWriter } from './journal-writer.ts'

const CHILD = fileURLToPath(new URL('./test-support/stream-child.ts', import.meta.url))

function lines(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe('streaming journal', () => {
  let temp: TempHome
  let dir: string
  beforeEach(() => {
    temp = makeTempHome()
    dir = join(temp.home, 'agents', 'default', 'journal')
  })
  afterEach(() => temp.cleanup())

  it('writes start, text, tool and done lines in order, in its own file, and deletes it on finalize', () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z')
    const journals = createJournals({ dir, clock })
    const journal = journals.open({ trigger: 'message', from: 'ada', sessionId: 'chat-1', turn: 12 })
    assert.equal(journal.path, join(dir, STREAMS_DIR, `${journal.id}.jsonl`))
    assert.match(journal.id, /^20260301T100000000Z-[0-9a-f]{8}$/)
    journal.writeText('Let me ')
    journal.writeText('check.')
    const id = journal.toolStart({ tool: 'shell', input: 'x'.repeat(900) })
    journal.toolEnd({ id, tool: 'shell', ok: false, result: 'y'.repeat(3000) })
    journal.writeText(' Done.')
    journal.flush()
    const written = lines(journal.path)
    assert.deepEqual(written.map((line) => line.type), ['start', 'text', 'tool_start', 'tool_end', 'text'])
    assert.deepEqual(written[0], { type: 'start', ts: '2026-03-01T10:00:00.000Z', trigger: 'message', from: 'ada', session: 'chat-1', turn: 12, stream: journal.id, writer: thisWriter() })
    assert.equal(written[1]?.text, 'Let me check.')
    assert.equal(String(written[2]?.input).length, 500)
    assert.equal(String(written[3]?.result).length, 2000)
    assert.equal(journals.find({ sessionId: 'chat-1', turn: 12 }), journal)
    assert.deepEqual(journals.orphans(), [], 'a stream open in this process is never an orphan')
    journal.finalize()
    assert.equal(existsSync(journal.path), false)
    assert.equal(journals.find({ sessionId: 'chat-1' }), undefined)
    assert.deepEqual(journals.claimOrphans(), [])
  })

  it('flushes as soon as 500 characters wait, and after the interval otherwise', async () => {
    const journal = createJournals({ dir, clock: systemClock, flushIntervalMs: 60 }).open({ trigger: 'message' })
    journal.writeText('a'.repeat(499))
    assert.equal(lines(journal.path).length, 1, 'nothing flushed below 500 characters')
    journal.writeText('b')
    assert.equal(lines(journal.path)[1]?.text, `${'a'.repeat(499)}b`)
    journal.writeText('tail')
    await sleep(150)
    assert.equal(lines(journal.path)[2]?.text, 'tail', 'the timer flushed the rest')
    journal.finalize()
  })

  it('touches its file while open (the heartbeat other hosts judge it by)', async () => {
    const journal = createJournals({ dir, clock: systemClock, heartbeatMs: 30 }).open({ trigger: 'message' })
    const past = new Date(Date.now() - 60_000)
    utimesSync(journal.path, past, past)
    await sleep(120)
    assert.ok(statSync(journal.path).mtimeMs > Date.now() - 5_000, 'the heartbeat moved the mtime forward')
    journal.finalize()
  })

  it('concurrent streams have their own files; finishing one leaves the other alone; a restarted stream of a turn supersedes it', () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z')
    const journals = createJournals({ dir, clock })
    const a = journals.open({ trigger: 'chat', sessionId: 'a', turn: 1 })
    const b = journals.open({ trigger: 'chat', sessionId: 'b', turn: 2 })
    assert.notEqual(a.path, b.path)
    a.writeText('from a')
    b.writeText('from b')
    a.finalize()
    assert.equal(existsSync(a.path), false)
    b.flush()
    assert.deepEqual(lines(b.path).map((line) => line.text ?? line.type), ['start', 'from b'])
    const again = journals.open({ trigger: 'chat', sessionId: 'b', turn: 2 })
    assert.equal(b.isOpen, false, 'the earlier stream of the same turn was finalized')
    assert.equal(journals.find({ sessionId: 'b' }), again)
    again.finalize()
    assert.deepEqual(readdirSync(join(dir, STREAMS_DIR)), [])
  })

  it('an abandoned stream is claimed, read with its tool calls (a broken last line skipped), and settled into recovered/ byte for byte', () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z')
    const first = createJournals({ dir, clock })
    const journal = first.open({ trigger: 'heartbeat', sessionId: 'hb-7', turn: 3 })
    journal.writeText('Checking the queue. ')
    journal.toolStart({ id: 'a', tool: 'queue', input: { name: 'jobs' } })
    journal.toolEnd({ id: 'a', tool: 'queue', ok: true, result: '3 waiting' })
    journal.toolStart({ id: 'b', tool: 'shell', input: 'restart worker' })
    journal.writeText('Restarting')
    first.abandonAll()
    assert.equal(journal.isOpen, false)
    // The crash: a half-written line.
    appendFileSync(journal.path, '{"type":"text","ts":"2026-03-01T10:00:0')

    const next = createJournals({ dir, clock })
    const [orphan] = next.orphans()
    assert.equal(orphan?.verdict.by, 'this-process', 'written by this process, which no longer has it open')
    const claimed = next.claimOrphans()
    assert.deepEqual(claimed, [{ id: journal.id, path: join(dir, RECOVERING_DIR, `${journal.id}.jsonl`) }])
    assert.equal(existsSync(journal.path), false)
    const recovery = next.readClaimed(claimed[0]!)
    assert.ok(recovery)
    assert.equal(recovery.text, 'Checking the queue. Restarting')
    assert.deepEqual(recovery.session, { trigger: 'heartbeat', sessionId: 'hb-7', startedAt: '2026-03-01T10:00:00.000Z' })
    assert.equal(recovery.turn, 3)
    assert.deepEqual(recovery.writer, thisWriter())
    assert.equal(recovery.finished, false)
    assert.deepEqual(
      recovery.toolCalls.map((call) => [call.id, call.tool, call.completed, call.ok, call.result]),
      [
        ['a', 'queue', true, true, '3 waiting'],
        ['b', 'shell', false, undefined, undefined],
      ],
    )
    assert.equal(recovery.skipped.length, 1)
    assert.equal(recovery.skipped[0]?.line, 7)
    const settled = next.settle(claimed[0]!)
    assert.equal(settled, `${RECOVERED_DIR}/${journal.id}.jsonl`)
    assert.ok(readFileSync(join(dir, settled), 'utf8').endsWith('"ts":"2026-03-01T10:00:0'), 'the kept copy has every byte, the broken line too')
    assert.deepEqual(next.claimOrphans(), [], 'settled: nothing left to claim')
    assert.equal(next.readClaimed(claimed[0]!), null)
  })

  it('a journal that cannot be written never fails the stream: the error goes to onError', () => {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, STREAMS_DIR), 'a file where the streams folder should be')
    const errors: unknown[] = []
    const journal = createJournals({ dir, clock: systemClock, onError: (error) => errors.push(error) }).open({ trigger: 'chat', sessionId: 's' })
    assert.equal(journal.isOpen, false)
    journal.writeText('still streaming')
    journal.toolEnd({ id: journal.toolStart({ tool: 'x' }), ok: true })
    journal.finalize()
    assert.equal(errors.length, 1)
    assert.match(String(errors[0]), /EEXIST|ENOTDIR/)
  })

  it('the single journal of older homes (streaming.jsonl, no writer) is still claimed and read', () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, LEGACY_JOURNAL_FILE), '{"type":"start","ts":"2026-03-01T09:00:00Z","trigger":"message","session":"old"}\n{"type":"text","ts":"2026-03-01T09:00:01Z","text":"hi"}\n{"type":"done","ts":"2026-03-01T09:00:02Z"}\n')
    const journals = createJournals({ dir, clock })
    assert.equal(journals.orphans()[0]?.verdict.by, 'legacy')
    const claimed = journals.claimOrphans()
    assert.equal(claimed.length, 1)
    assert.match(claimed[0]!.id, /^streaming-20260301T100000000Z-[0-9a-f]{8}$/)
    assert.equal(existsSync(join(dir, LEGACY_JOURNAL_FILE)), false)
    const recovery = journals.readClaimed(claimed[0]!)
    assert.equal(recovery?.finished, true)
    assert.equal(recovery?.text, 'hi')
    assert.equal(recovery?.session?.sessionId, 'old')
  })

  it('a child killed with SIGKILL: alive, its stream is nobody’s to claim; dead, it is claimed once and loses at most about the last second of text', async () => {
    const child = spawn(process.execPath, [CHILD, dir, '15'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const reported: Array<{ n: number; at: number; chunk: string }> = []
    let stderr = ''
    let pending = ''
    let stream: string | undefined
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    child.stdout.on('data', (data: Buffer) => {
      pending += data.toString()
      const parts = pending.split('\n')
      pending = parts.pop() ?? ''
      for (const part of parts) {
        const value = JSON.parse(part) as { ready?: boolean; stream?: string; n?: number; at?: number; chunk?: string }
        if (value.ready) stream = value.stream
        else if (value.n !== undefined && value.at !== undefined && value.chunk !== undefined) reported.push({ n: value.n, at: value.at, chunk: value.chunk })
      }
    })
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
    const started = Date.now()
    while (reported.length < 150 && Date.now() - started < 10_000) await sleep(20)
    assert.ok(stream, `child never started: ${stderr}`)

    const other = createJournals({ dir, clock: systemClock })
    assert.deepEqual(other.claimOrphans(), [], 'the writer is alive: its stream is not an orphan')
    assert.ok(existsSync(join(dir, STREAMS_DIR, `${stream}.jsonl`)))

    const killedAt = Date.now()
    child.kill('SIGKILL')
    await exited

    const claimed = other.claimOrphans()
    assert.deepEqual(
      claimed.map((claim) => claim.id),
      [stream],
    )
    assert.deepEqual(createJournals({ dir, clock: systemClock }).orphans(), [], 'claimed once: nothing left for another opener')
    const recovery = other.readClaimed(claimed[0]!)
    assert.ok(recovery)
    const written = reported.map((entry) => entry.chunk).join('')
    assert.ok(written.startsWith(recovery.text) || recovery.text.startsWith(written), 'recovered text is exactly what was written, in order')
    // What the child handed over more than a second (plus scheduling slack on a busy machine)
    // before the kill must be on disk.
    const mustHave = reported.filter((entry) => entry.at < killedAt - 1000 - 400)
    assert.ok(mustHave.length > 20, 'the child streamed long enough for the bound to mean something')
    const mustText = mustHave.map((entry) => entry.chunk).join('')
    assert.ok(recovery.text.length >= mustText.length, `lost more than ~1 s: recovered ${recovery.text.length} chars, needed ${mustText.length}`)
    assert.equal(recovery.finished, false)
    assert.equal(recovery.session?.sessionId, 'crash-session')
    assert.equal(recovery.writer?.pid, child.pid)
    assert.deepEqual(
      recovery.toolCalls.map((call) => [call.id, call.completed]),
      [
        ['lookup-1', true],
        ['shell-2', false],
      ],
    )
  })
})
