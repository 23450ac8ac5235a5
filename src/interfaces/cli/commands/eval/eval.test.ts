import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { makeTempHome } from '../../../../testing/temp-home.ts'
import { evalCommand } from './index.ts'

const fixture = new URL('../../../../eval/fixtures/tiny.eval.json', import.meta.url).pathname

test('engram eval retrieval runs the protocol through a real mind and writes one run line per question', async () => {
  const temp = makeTempHome()
  try {
    const run = join(temp.home, '..', 'run.jsonl')
    const errors: string[] = []
    const result = await evalCommand.run({
      io: { stdout: { write: () => true }, stderr: { write: (t: string) => errors.push(t) }, env: temp.env, cwd: process.cwd(), isTTY: false },
      args: [fixture],
      options: { run, embedder: 'none' },
      json: true,
      settings: {},
    })
    const lines = readFileSync(run, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; ranked: string[]; contexts: Record<string, string>; ms: number })
    assert.deepEqual(lines.map((l) => l.id), ['c1/q1', 'c1/q2', 'c1/q3', 'c1/q4'])
    const byId = new Map(lines.map((l) => [l.id, l]))
    assert.equal(byId.get('c1/q1')?.ranked[0], 'T1', 'the adoption turn ranks first for the pet question')
    assert.equal(byId.get('c1/q2')?.ranked[0], 'T5', 'the knee/swimming turn ranks first')
    for (const line of lines) {
      for (const budget of ['512', '1024', '2048']) assert.ok((line.contexts[budget] ?? '').length / 4 <= Number(budget), `context ${budget} within budget`)
    }
    assert.ok(byId.get('c1/q1')?.contexts['2048']?.includes('I adopted a grey cat from the shelter yesterday.'), 'priming injects the evidence turn verbatim')
    const data = result.data as { questions: number; engram: Array<{ label: string; summary: { n: number; recall: Record<number, number> } }> }
    assert.equal(data.questions, 4)
    assert.equal(data.engram.find((r) => r.label === 'overall')?.summary.n, 3)
    assert.equal(data.engram.find((r) => r.label === 'adversarial')?.summary.n, 1)
    assert.match(result.human, /overall\s+engram/)
    assert.match(result.human, /overall\s+bm25/)
    // Progress on stderr (decision 0073): a line as each phase starts, at most one a second else, and one at the end.
    const progress = errors.map((line) => JSON.parse(line) as { command?: string; phase?: string; outcome?: string })
    assert.ok(progress.every((line) => line.command === 'eval'), errors.join(''))
    assert.ok(progress.some((line) => line.phase === 'c1: questions'), 'the questions of the one conversation')
    assert.equal(progress.at(-1)?.outcome, 'done')
  } finally {
    temp.cleanup()
  }
})

test('engram eval retrieval refuses a missing --run and a file in another format', async () => {
  const context = { io: { stdout: { write: () => true }, stderr: { write: () => true }, env: {}, cwd: process.cwd(), isTTY: false }, json: true, settings: {} }
  await assert.rejects(evalCommand.run({ ...context, args: [fixture], options: {} }), /--run/)
  const temp = makeTempHome()
  try {
    await assert.rejects(evalCommand.run({ ...context, args: [import.meta.filename], options: { run: join(temp.home, '..', 'r.jsonl') } }), /not JSON|retrieval-eval/)
  } finally {
    temp.cleanup()
  }
})

test('engram eval retrieval runs several files: a table per set beside bm25, the categories below it, and a summary with the mean', async () => {
  const temp = makeTempHome()
  try {
    // A user–assistant conversation: the user's own statement must be found; the role is read.
    const chat = {
      format: 'retrieval-eval/1',
      name: 'chat.eval',
      source: 'written for engram tests',
      conversations: [
        {
          id: 'a1',
          participants: ['user', 'assistant'],
          sessions: [
            {
              id: '1',
              started_at: '2024-03-01T10:00:00',
              turns: [
                { id: 'U1', speaker: 'user', role: 'user', text: 'I keep my sourdough starter in the fridge and feed it on Sundays.' },
                { id: 'A1', speaker: 'assistant', role: 'assistant', text: 'Feeding a sourdough starter once a week from the fridge works well; let it warm up first.' },
              ],
            },
          ],
          questions: [{ id: 'a1/q1', question: 'When do I feed my sourdough starter?', answer: 'Sundays', category: 'preference', evidence: ['U1'] }],
        },
      ],
    }
    const second = join(temp.home, '..', 'chat.eval.json')
    writeFileSync(second, JSON.stringify(chat))
    const run = join(temp.home, '..', 'run.jsonl')
    const result = await evalCommand.run({
      io: { stdout: { write: () => true }, stderr: { write: () => true }, env: temp.env, cwd: process.cwd(), isTTY: false },
      args: [fixture, second],
      options: { run, embedder: 'none' },
      json: true,
      settings: {},
    })
    for (const name of ['tiny.eval', 'chat.eval']) assert.ok(existsSync(join(temp.home, '..', `run.${name}.jsonl`)), `a run file for ${name}`)
    const chatRun = JSON.parse(readFileSync(join(temp.home, '..', 'run.chat.eval.jsonl'), 'utf8').trim()) as { ranked: string[] }
    assert.equal(chatRun.ranked[0], 'U1', "the user's own statement ranks first")
    const data = result.data as { datasets: Array<{ dataset: string; questions: number }> }
    assert.deepEqual(data.datasets.map((d) => [d.dataset, d.questions]), [['tiny.eval', 4], ['chat.eval', 1]])
    assert.match(result.human, /below bm25/)
    assert.match(result.human, /^mean\s+\d/m)
    const bad = { ...chat, conversations: [{ ...chat.conversations[0], sessions: [{ ...chat.conversations[0]?.sessions[0], turns: [{ id: 'X', speaker: 'user', role: 'robot', text: 'hi' }] }] }] }
    writeFileSync(second, JSON.stringify(bad))
    await assert.rejects(evalCommand.run({ io: { stdout: { write: () => true }, stderr: { write: () => true }, env: temp.env, cwd: process.cwd(), isTTY: false }, args: [second], options: { run, embedder: 'none' }, json: true, settings: {} }), /role must be "user" or "assistant"/)
  } finally {
    temp.cleanup()
  }
})

test('engram eval retrieval --backend takes the names of the backend table, and one with URL schemes needs ENGRAM_DATABASE_URL', async () => {
  const temp = makeTempHome()
  try {
    const run = (backend: string, env: Record<string, string | undefined>) =>
      evalCommand.run({
        io: { stdout: { write: () => true }, stderr: { write: () => true }, env, cwd: process.cwd(), isTTY: false },
        args: [fixture],
        options: { run: join(temp.home, '..', 'run.jsonl'), embedder: 'none', backend },
        json: true,
        settings: {},
      })
    await assert.rejects(run('mysql', temp.env), /--backend must be embedded or postgres, not "mysql"/)
    const { ENGRAM_DATABASE_URL: _url, ...withoutUrl } = temp.env
    await assert.rejects(run('postgres', withoutUrl), (error: Error & { fix?: string }) => {
      assert.match(error.message, /--backend postgres needs the database: ENGRAM_DATABASE_URL is not set/)
      assert.match(error.fix ?? '', /ENGRAM_DATABASE_URL=postgres:\/\/user:password@host:5432\/database/)
      return true
    })
  } finally {
    temp.cleanup()
  }
})
