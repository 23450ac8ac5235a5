/**
 * `engram serve` on PostgreSQL (decision 0038 on decision 0037): two servers — two processes with homes of
 * their own, as on two hosts — on one database schema, behind one load balancer as far as a client
 * can tell. A lesson memorized through one is found by a search on the other; a turn begun on one
 * is ended on the other, and the conversation goes on through the first with that reply in it;
 * a session stays its user's whichever server is asked.
 */
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { dropPostgresSchema } from '../src/storage/postgres/connection.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'

const ADA = 'ada-postgres-token-0123456789'
const BOB = 'bob-postgres-token-0123456789'

interface Answer {
  status: number
  body: {
    ok: boolean
    error?: { code: string; message: string; fix: string }
    turn?: { number: number; user: string; replyIds: number[]; messages: Array<{ role: string; content: string }> }
    hits?: Array<{ text: string }>
    report?: { saved: unknown[] }
    messageIds?: number[]
  }
}

async function call(server: ServeProcess, method: 'GET' | 'POST', path: string, token: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${server.address}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return { status: response.status, body: (await response.json()) as Answer['body'] }
}

onPostgres('engram serve', (url) => {
  describe('two engram serve processes on one PostgreSQL schema', { timeout: 120_000 }, () => {
    let temp: TempHome
    const schema = freshSchema()
    let one: ServeProcess
    let two: ServeProcess

    /** A "host": a home and a temp folder of its own, the shared schema, the same tokens. */
    function hostEnv(name: string): { home: string; env: Record<string, string> } {
      const root = join(temp.home, '..', 'hosts', name)
      mkdirSync(join(root, 'tmp'), { recursive: true })
      return {
        home: join(root, 'home'),
        env: { ...temp.env, TMPDIR: join(root, 'tmp'), ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema, ENGRAM_SERVE_TOKENS: `${ADA}=default:ada,${BOB}=default:bob` },
      }
    }

    before(async () => {
      temp = makeTempHome('engram-serve-pg-')
      // One after the other: the first migrates the schema, the second finds it ready.
      one = await startServe({ ...hostEnv('one'), killAfterMs: 110_000 })
      two = await startServe({ ...hostEnv('two'), killAfterMs: 110_000 })
    })
    after(async () => {
      const codes = await Promise.all([one?.stop('SIGTERM'), two?.stop('SIGTERM')])
      try {
        assert.deepEqual(codes, [0, 0], `both servers stop with exit 0:\n${one?.stderr()}\n${two?.stderr()}`)
      } finally {
        await dropPostgresSchema(url, schema)
        temp.cleanup()
      }
    })

    test('a lesson memorized through one server is found by a search on the other, for its user only', async () => {
      const text = 'The Kestrel billing export must run after the ledger close, never before it.'
      const saved = await call(one, 'POST', '/v1/memorize', ADA, { entries: [{ text, kind: 'lesson' }] })
      assert.equal(saved.status, 200, JSON.stringify(saved.body))
      assert.equal(saved.body.report?.saved.length, 1)

      const found = await call(two, 'POST', '/v1/search', ADA, { query: 'Kestrel billing export ledger close', kinds: ['lesson'], limit: 5 })
      assert.equal(found.status, 200, JSON.stringify(found.body))
      assert.ok(found.body.hits?.some((hit) => hit.text === text), JSON.stringify(found.body.hits))
      const bobs = await call(two, 'POST', '/v1/search', BOB, { query: 'Kestrel billing export ledger close', limit: 5 })
      assert.equal(bobs.status, 200)
      assert.ok(!JSON.stringify(bobs.body.hits).includes('Kestrel'), 'Bob does not see Ada\'s lesson on either server')
    })

    test('a turn begun on one server is ended on the other, and the conversation goes on with that reply', async () => {
      const begun = await call(one, 'POST', '/v1/turns/begin', ADA, { session: 'ada-pg-1', message: 'When does the Kestrel billing export run?' })
      assert.equal(begun.status, 200, JSON.stringify(begun.body))
      const number = begun.body.turn?.number
      assert.equal(number, 1)

      const reply = 'After the ledger close: the Kestrel export waits for it every month.'
      const ended = await call(two, 'POST', '/v1/turns/end', ADA, { session: 'ada-pg-1', turn: number, reply })
      assert.equal(ended.status, 200, JSON.stringify(ended.body))
      assert.equal(ended.body.messageIds?.length, 1)

      // The first server knows the turn has ended, with the reply the second stored.
      const stored = await call(one, 'GET', `/v1/turns/ada-pg-1/${number}`, ADA)
      assert.equal(stored.status, 200, JSON.stringify(stored.body))
      assert.deepEqual(stored.body.turn?.replyIds, ended.body.messageIds)
      const again = await call(one, 'POST', '/v1/turns/end', ADA, { session: 'ada-pg-1', turn: number, reply: 'Twice.' })
      assert.equal(again.status, 400, JSON.stringify(again.body))

      // The next turn, begun on the first server, has the reply in its conversation.
      const next = await call(one, 'POST', '/v1/turns/begin', ADA, { session: 'ada-pg-1', message: 'And the payroll export?' })
      assert.equal(next.status, 200, JSON.stringify(next.body))
      assert.equal(next.body.turn?.number, 2)
      assert.ok(next.body.turn?.messages.some((message) => message.role === 'assistant' && message.content.includes('waits for it every month')), JSON.stringify(next.body.turn?.messages))
    })

    test('a session stays its user\'s on both servers', async () => {
      const begun = await call(two, 'POST', '/v1/turns/begin', BOB, { session: 'bob-pg-1', message: 'Hello from Bob.' })
      assert.equal(begun.status, 200, JSON.stringify(begun.body))
      const intruding = await call(one, 'POST', '/v1/turns/begin', ADA, { session: 'bob-pg-1', message: 'Hello from Ada.' })
      assert.equal(intruding.status, 403, JSON.stringify(intruding.body))
      assert.equal(intruding.body.error?.code, 'access_denied')
      const ending = await call(one, 'POST', '/v1/turns/end', ADA, { session: 'bob-pg-1', turn: 1, reply: 'x' })
      assert.equal(ending.status, 404, JSON.stringify(ending.body))
    })
  })
})
