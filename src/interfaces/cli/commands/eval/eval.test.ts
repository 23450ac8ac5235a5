import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
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
    assert.equal(errors.length, 1, 'one progress line per conversation')
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
