import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ManualClock, systemClock } from '../../core/clock.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import { createStreamingJournal, JOURNAL_FILE } from './streaming-journal.ts'

const CHILD = fileURLToPath(new URL('./testing/stream-child.ts', import.meta.url))

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

  it('writes start, text, tool and done lines in order and deletes the file on finalize', () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z')
    const journal = createStreamingJournal({ dir, clock })
    journal.open({ trigger: 'message', from: 'ada', sessionId: 'chat-1' })
    journal.writeText('Let me ')
    journal.writeText('check.')
    const id = journal.toolStart({ tool: 'shell', input: 'x'.repeat(900) })
    journal.toolEnd({ id, tool: 'shell', ok: false, result: 'y'.repeat(3000) })
    journal.writeText(' Done.')
    journal.flush()
    const written = lines(journal.path)
    assert.deepEqual(written.map((line) => line.type), ['start', 'text', 'tool_start', 'tool_end', 'text'])
    assert.deepEqual(written[0], { type: 'start', ts: '2026-03-01T10:00:00.000Z', trigger: 'message', from: 'ada', session: 'chat-1' })
    assert.equal(written[1]?.text, 'Let me check.')
    assert.equal(String(written[2]?.input).length, 500)
    assert.equal(String(written[3]?.result).length, 2000)
    journal.finalize()
    assert.equal(existsSync(journal.path), false)
    assert.equal(journal.hasOrphan(), false)
    assert.equal(journal.recover(), null)
  })

  it('flushes as soon as 500 characters wait, and after the interval otherwise', async () => {
    const journal = createStreamingJournal({ dir, clock: systemClock, flushIntervalMs: 60 })
    journal.open({ trigger: 'message' })
    journal.writeText('a'.repeat(499))
    assert.equal(lines(journal.path).length, 1, 'nothing flushed below 500 characters')
    journal.writeText('b')
    assert.equal(lines(journal.path)[1]?.text, `${'a'.repeat(499)}b`)
    journal.writeText('tail')
    await sleep(150)
    assert.equal(lines(journal.path)[2]?.text, 'tail', 'the timer flushed the rest')
    journal.finalize()
  })

  it('recovers text, tool calls with their status and the session from an orphan, skipping a broken last line, and archives it', () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z')
    const first = createStreamingJournal({ dir, clock })
    first.open({ trigger: 'heartbeat', sessionId: 'hb-7' })
    first.writeText('Checking the queue. ')
    first.toolStart({ id: 'a', tool: 'queue', input: { name: 'jobs' } })
    first.toolEnd({ id: 'a', tool: 'queue', ok: true, result: '3 waiting' })
    first.toolStart({ id: 'b', tool: 'shell', input: 'restart worker' })
    first.writeText('Restarting')
    first.flush()
    // The crash: a half-written line, and no finalize.
    appendFileSync(first.path, '{"type":"text","ts":"2026-03-01T10:00:0')

    const next = createStreamingJournal({ dir, clock })
    assert.equal(next.hasOrphan(), true)
    const recovery = next.recover()
    assert.ok(recovery)
    assert.equal(recovery.text, 'Checking the queue. Restarting')
    assert.deepEqual(recovery.session, { trigger: 'heartbeat', sessionId: 'hb-7', startedAt: '2026-03-01T10:00:00.000Z' })
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
    assert.equal(next.hasOrphan(), false)
    assert.ok(recovery.archivedTo)
    const archived = readFileSync(join(dir, recovery.archivedTo), 'utf8')
    assert.ok(archived.endsWith('"ts":"2026-03-01T10:00:0'), 'the archived copy keeps every byte, the broken line too')
  })

  it('reports a finished turn whose file was not deleted, and open() moves an unrecovered orphan aside', () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, JOURNAL_FILE), '{"type":"start","ts":"2026-03-01T09:00:00Z","trigger":"message"}\n{"type":"text","ts":"2026-03-01T09:00:01Z","text":"hi"}\n{"type":"done","ts":"2026-03-01T09:00:02Z"}\n')
    const journal = createStreamingJournal({ dir, clock })
    const moved = journal.open({ trigger: 'message' })
    assert.ok(moved.movedOrphanTo)
    const kept = readFileSync(join(dir, moved.movedOrphanTo), 'utf8')
    assert.ok(kept.includes('"text":"hi"'))
    journal.finalize()
    writeFileSync(join(dir, JOURNAL_FILE), kept)
    const recovery = createStreamingJournal({ dir, clock }).recover()
    assert.equal(recovery?.finished, true)
    assert.equal(recovery?.text, 'hi')
    assert.equal(readdirSync(join(dir, 'recovered')).length, 2)
  })

  it('a child killed with SIGKILL while streaming loses at most about the last second of text', async () => {
    const child = spawn(process.execPath, [CHILD, dir, '15'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const reported: Array<{ n: number; at: number; chunk: string }> = []
    let stderr = ''
    let pending = ''
    let ready = false
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    child.stdout.on('data', (data: Buffer) => {
      pending += data.toString()
      const parts = pending.split('\n')
      pending = parts.pop() ?? ''
      for (const part of parts) {
        const value = JSON.parse(part) as { ready?: boolean; n?: number; at?: number; chunk?: string }
        if (value.ready) ready = true
        else if (value.n !== undefined && value.at !== undefined && value.chunk !== undefined) reported.push({ n: value.n, at: value.at, chunk: value.chunk })
      }
    })
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
    const started = Date.now()
    while (reported.length < 150 && Date.now() - started < 10_000) await sleep(20)
    assert.ok(ready, `child never started: ${stderr}`)
    const killedAt = Date.now()
    child.kill('SIGKILL')
    await exited

    const journal = createStreamingJournal({ dir, clock: systemClock })
    assert.equal(journal.hasOrphan(), true)
    const recovery = journal.recover()
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
    assert.deepEqual(
      recovery.toolCalls.map((call) => [call.id, call.completed]),
      [
        ['lookup-1', true],
        ['shell-2', false],
      ],
    )
  })
})
