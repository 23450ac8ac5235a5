import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import type { Engram } from '../../core/engram.ts'
import { createPostgresConfirmationQueue } from './confirmation-queue.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

const clock = new ManualClock('2026-03-01T10:00:00Z')

function lesson(text: string, extra: Partial<Engram> = {}): Engram {
  return { text, kind: 'lesson', scope: 'global', confidence: 'medium', source: 'llm', ...extra }
}

onPostgres('ConfirmationQueue rows', (url) => {
  test('the same memory queued by many processes at once waits once; answers at once decide each row once', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      // Queues over one handle stand for processes: each statement runs on its own connection.
      const queues = Array.from({ length: 6 }, () => createPostgresConfirmationQueue(handle, { agent: 'a', clock }))
      const queued = await Promise.all(queues.map((queue) => queue.enqueue(lesson('Deploys happen on Fridays'), 'copilot mode', 'ann')))
      assert.equal(new Set(queued.map((p) => p.id)).size, 1)
      for (let i = 0; i < 10; i++) await queues[0]?.enqueue(lesson(`lesson ${i}`), 'copilot mode', 'ann')
      const answers = await Promise.all(queues.map((queue, i) => (i % 2 ? queue.accept('all', 'ann') : queue.reject('all', 'ann'))))
      const decided = answers.flat().map((p) => p.id)
      assert.equal(decided.length, 11, 'every row decided once')
      assert.equal(new Set(decided).size, 11)
      assert.deepEqual(await queues[0]?.pending('ann'), [])
      const again = await queues[0]?.enqueue(lesson('Deploys happen on Fridays'), 'copilot mode', 'ann')
      assert.ok(again && !queued.some((p) => p.id === again.id), 'a decided memory can wait again')
    } finally {
      await cleanup()
    }
  })

  test('project confirmations stay in their project; documents dedupe by path, mode and content; NUL survives', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const inOne = createPostgresConfirmationQueue(handle, { agent: 'a', project: '/work/one', clock })
      const inTwo = createPostgresConfirmationQueue(handle, { agent: 'a', project: '/work/two', clock })
      await inOne.enqueue(lesson('one only', { scope: 'project' }), 'copilot mode')
      await inOne.enqueue(lesson('everywhere \u0000 with a NUL'), 'copilot mode')
      assert.deepEqual((await inOne.pending()).map((p) => p.engram?.text), ['one only', 'everywhere \u0000 with a NUL'])
      assert.deepEqual((await inTwo.pending()).map((p) => p.engram?.text), ['everywhere \u0000 with a NUL'])
      assert.deepEqual(await inTwo.accept([(await inOne.pending())[0]?.id ?? ''], undefined), [], 'another project cannot answer it')
      const document = { path: 'knowledge/x.md', owner: 'agent' as const, content: '# X', mode: 'overwrite' as const }
      const first = await inOne.enqueueDocument(document, 'promotion', 'ann')
      assert.equal((await inTwo.enqueueDocument(document, 'promotion', 'ann')).id, first.id)
      assert.notEqual((await inOne.enqueueDocument({ ...document, mode: 'append' }, 'promotion', 'ann')).id, first.id)
      assert.deepEqual((await inOne.pending('ann'))[0]?.document, document)
      await assert.rejects(inOne.accept(['x']), { code: 'invalid_argument' })
      await handle.pool.query(`UPDATE memory_confirmations SET engram = '{"text": 1}' WHERE id = $1`, [Number(first.id) - 1])
      await assert.rejects(inOne.pending(), (error: Error & { code?: string; fix?: string }) => error.code === 'storage_corrupt' && /memory_confirmations in schema/.test(error.fix ?? ''))
    } finally {
      await cleanup()
    }
  })
})
