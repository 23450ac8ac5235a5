import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { startPhase } from '../../core/progress.ts'
import type { CommandContext } from './command.ts'
import { ExitCode } from './io.ts'
import { withProgress } from './progress.ts'

function contextWith(stderr: { isTTY?: boolean; write(text: string): unknown }, json: boolean): { context: CommandContext; stdout: string[] } {
  const stdout: string[] = []
  const context: CommandContext = {
    io: { stdout: { write: (text: string) => stdout.push(text) }, stderr, env: { NO_COLOR: '1' }, cwd: process.cwd(), isTTY: false },
    args: [],
    options: {},
    json,
    settings: {},
  }
  return { context, stdout }
}

test('on a terminal: one line redrawn in place with a bar, counts, rate and time left, gone when the work is done', async () => {
  const written: string[] = []
  const { context, stdout } = contextWith({ isTTY: true, write: (text: string) => written.push(text) }, false)
  const result = await withProgress(context, { command: 'reindex', resume: 'run it again' }, async ({ onProgress }) => {
    onProgress?.({ phase: 'writing units', done: 0, total: 10 })
    await sleep(150)
    onProgress?.({ phase: 'writing units', done: 5, total: 10 })
    return { data: 'done', human: 'done' }
  })
  assert.equal(result.data, 'done')
  assert.deepEqual(stdout, [], 'nothing on stdout')
  assert.ok(written.every((chunk) => chunk.startsWith('\r') && !chunk.includes('\n')), JSON.stringify(written))
  assert.match(written[1] ?? '', /engram reindex {2}writing units {2}\[█{12}░{12}\] {2}5\/10 {2}\d+(\.\d)?\/s, \d+(\.\d)? s left/)
  assert.match(written.at(-1) ?? '', /^\r +\r$/, 'the bar is cleared for the result')
})

test('on a narrow terminal the line is cut to its width: a line that wraps could not be redrawn in place', async () => {
  const written: string[] = []
  const { context } = contextWith({ isTTY: true, columns: 40, write: (text: string) => written.push(text) } as { isTTY: boolean; write(text: string): unknown }, false)
  await withProgress(context, { command: 'migrate', resume: 'run it again' }, async ({ onProgress }) => {
    onProgress?.({ phase: 'default: importing files', done: 0, total: 10_000 })
    return { data: null, human: '' }
  })
  assert.equal(written[0], '\rengram migrate  default: importing file', '39 characters and the carriage return')
})

test('off a terminal: a line as a phase starts, at most one a second within it, and one at the end, as JSON log lines', async () => {
  const written: string[] = []
  const { context } = contextWith({ write: (text: string) => written.push(text) }, true)
  await withProgress(context, { command: 'export', resume: 'run it again' }, async ({ onProgress }) => {
    for (let done = 0; done <= 1000; done++) onProgress?.({ phase: 'writing files', done, total: 1000 })
    onProgress?.({ phase: 'checking', done: 0 })
    return { data: null, human: '' }
  })
  const lines = written.map((line) => JSON.parse(line) as { command: string; phase?: string; done?: number; outcome?: string; msg: string })
  assert.deepEqual(
    lines.map((line) => [line.phase, line.done, line.outcome]),
    [
      ['writing files', 0, undefined],
      ['checking', 0, undefined],
      [undefined, undefined, 'done'],
    ],
    '1,001 items in a moment: no line per item',
  )
  assert.ok(lines.every((line) => line.command === 'export'))
  assert.equal(lines[0]?.msg, 'export: writing files 0/1,000 (0%)')
})

test('Ctrl-C stops the work at its next safe point: how far it came, how to resume, exit 130', async () => {
  const written: string[] = []
  const { context } = contextWith({ write: (text: string) => written.push(text) }, false)
  let items = 0
  const result = await withProgress(context, { command: 'import', resume: 'Run `engram import engram DIR` again to finish.' }, async (progress) => {
    const importing = startPhase(progress, 'importing files', 100)
    for (let i = 0; i < 100; i++) {
      await importing.checkpoint()
      if (i === 40) process.emit('SIGINT')
      items++
      importing.step()
      await sleep(1)
    }
    return { data: 'all', human: 'all' }
  })
  assert.equal(result.exitCode, ExitCode.interrupted)
  assert.equal(items, 41, 'the item under way when Ctrl-C came is finished, the next is not begun')
  assert.deepEqual(result.data, { interrupted: true, phase: 'importing files', done: 41, total: 100, resume: 'Run `engram import engram DIR` again to finish.' })
  assert.match(result.human, /^engram import was interrupted \(Ctrl-C\) while importing files 41\/100 \(41%\), [\d.]+\/s\.\nRun `engram import engram DIR` again to finish\.$/)
  assert.ok(written.some((line) => line.includes('stopping at the next safe point')))
  assert.equal(process.listenerCount('SIGINT'), 0, 'its handler is gone with the command')
})
