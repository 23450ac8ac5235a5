/**
 * Contract suite for ConfirmationQueue: the SQLite and PostgreSQL queues must both pass it. `make`
 * returns queues of several agents over one store (a home's database), since a user's
 * confirmations are exported and erased across every agent (decision 0023).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Engram } from '../../core/engram.ts'
import type { ConfirmationQueue } from '../contracts.ts'

export interface ConfirmationQueueFixture {
  /** The queue of `agent`, all agents sharing one store. */
  queueOf(agent: string): ConfirmationQueue
  cleanup(): Promise<void>
}

function engram(text: string, owner?: Engram['owner']): Engram {
  return { text, kind: 'lesson', scope: 'global', confidence: 'medium', source: 'llm', ...(owner ? { owner } : {}) }
}

/** Registers the ConfirmationQueue contract tests under `describe(name)`. */
export function runConfirmationQueueContract(name: string, make: () => Promise<ConfirmationQueueFixture>): void {
  async function withQueues(fn: (queueOf: ConfirmationQueueFixture['queueOf']) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture.queueOf)
    } finally {
      await fixture.cleanup()
    }
  }

  describe(`ConfirmationQueue contract: ${name}`, () => {
    test('a user sees and answers only what their own sessions asked', () =>
      withQueues(async (queueOf) => {
        const queue = queueOf('a')
        const asked = await queue.enqueue(engram('Ann earns 120k', 'user:ann'), 'copilot mode', 'ann')
        assert.equal((await queue.enqueue(engram('Ann earns 120k', 'user:ann'), 'copilot mode', 'ann')).id, asked.id, 'the same memory waits once')
        await queue.enqueue(engram('Bob likes tea', 'user:bob'), 'copilot mode', 'bob')
        assert.deepEqual((await queue.pending('ann')).map((p) => p.engram?.text), ['Ann earns 120k'])
        assert.deepEqual(await queue.accept('all', 'bob').then((done) => done.map((p) => p.engram?.text)), ['Bob likes tea'])
        assert.equal((await queue.pending('ann')).length, 1)
      }))

    test('ofUser lists a user\'s confirmations of every agent, decided ones too; purgeUser erases them and nothing else', () =>
      withQueues(async (queueOf) => {
        const a = queueOf('a')
        const b = queueOf('b')
        await a.enqueue(engram('Ann earns 120k', 'user:ann'), 'copilot mode', 'ann')
        await a.enqueue(engram('Teams deploy on Fridays', 'agent'), 'promotion', 'ann')
        const onB = await b.enqueue(engram('Ann prefers tea', 'user:ann'), 'copilot mode', 'ann')
        await b.reject([onB.id], 'ann')
        await a.enqueue(engram('About ann, asked by the agent', 'user:ann'), 'copilot mode')
        await a.enqueue(engram('Bob likes tea', 'user:bob'), 'copilot mode', 'bob')
        await a.enqueue(engram('Agent rule', 'agent'), 'copilot mode')

        const listed = await a.ofUser('ann')
        assert.deepEqual(listed.map((c) => `${c.agent}:${c.status}:${c.engram?.text}`).sort(), [
          'a:pending:About ann, asked by the agent',
          'a:pending:Ann earns 120k',
          'a:pending:Teams deploy on Fridays',
          'b:rejected:Ann prefers tea',
        ])
        assert.ok(listed.find((c) => c.status === 'rejected')?.decidedAt)

        assert.equal(await a.purgeUser('ann'), 4)
        assert.deepEqual(await a.ofUser('ann'), [])
        assert.deepEqual(await b.pending('ann'), [])
        assert.deepEqual((await a.pending('bob')).map((p) => p.engram?.text), ['Bob likes tea'])
        assert.deepEqual((await a.pending()).map((p) => p.engram?.text), ['Agent rule'])
        assert.equal(await a.purgeUser('ann'), 0)
      }))
  })
}
