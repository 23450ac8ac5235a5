/**
 * Markdown is an export, on PostgreSQL (decision 0036): an embedded home
 * holding every kind of memory of every owner and a conversation with a summary → `migrateBackend`
 * into PostgreSQL → an export from the database is the same tree, file for file, as the export
 * of the home; the conversation's messages, summary and items are the same; a second migration
 * adds nothing.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import type { Engram } from '../src/core/engram.ts'
import { exportMemory } from '../src/memory/portability/export-memory.ts'
import { migrateBackend } from '../src/memory/portability/migrate-backend.ts'
import { createMind, type Mind } from '../src/mind.ts'
import type { Backend } from '../src/storage/contracts.ts'
import { openPostgresBackend } from '../src/storage/postgres/backend.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { openPostgres } from '../src/storage/postgres/connection.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

function tree(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true })
    .flatMap((entry) => {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`
      return entry.isDirectory() ? tree(dir, path) : [path]
    })
    .sort()
}

const lesson = (text: string, extra: Partial<Engram> = {}): Engram => ({ text, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', ...extra })

onPostgres('export after migrate', (url) => {
  describe('embedded home → migrate → PostgreSQL → export', () => {
    let tmp: TempHome
    let out: string
    let mind: Mind
    let pg: Backend
    const schema = freshSchema()
    const clock = new ManualClock('2026-03-02T09:00:00Z')

    before(async () => {
      tmp = makeTempHome('engram-pg-round-trip-')
      out = mkdtempSync(join(tmpdir(), 'engram-pg-export-'))
      mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, embedder: null })
      await mind.encode([
        { text: 'Answer in English unless asked otherwise', kind: 'always', scope: 'global', confidence: 'high', source: 'user' },
        { text: 'When a deploy fails, read the release notes first', kind: 'when', scope: 'global', confidence: 'high', source: 'user', tool: 'deploy' },
        lesson('Deploys on Fridays need a second reviewer', { topic: 'deploys' }),
        lesson('The office coffee machine is on floor 3'),
        lesson('Ada prefers answers in bullet points', { owner: 'user:ada', topic: 'style' }),
        lesson('The team standup is at 09:30', { owner: 'shared' }),
      ])
      await mind.backend.engrams('global')?.rewriteIdentity([{ text: 'I am the release assistant', kind: 'profile', meta: {} }])
      await mind.backend.documents.write('knowledge', 'tea', { created_at: '2026-03-01T08:00:00Z', confidence: 0.9 }, '# Tea\n\nGreen tea steeps for two minutes.\n')
      await mind.backend.documents.write('procedure', 'release', { description: 'Cut a release', version: 2 }, '1. Tag\n2. Build\n')
      await mind.backend.documents.append('episode', '2026-03-01', '## 10:00 Deploy\n\nThe deploy went fine.\n')
      await mind.backend.owned('user:ada').documents.write('knowledge', 'ada-projects', {}, 'Ada works on billing.\n')
      await mind.backend.documents.write('user', 'ada', { name: 'Ada' }, '# Ada\n')
      const session = mind.session('chat-ada', { user: 'ada' })
      for (const question of ['Where is the coffee machine?', 'When is the standup?']) {
        const turn = await session.begin(question)
        await session.end(turn, 'Noted.')
      }
      await mind.idle()
      const conversation = await mind.backend.context.findConversation('chat-ada', 'default')
      assert.ok(conversation)
      const items = (await mind.backend.context.items(conversation.id)).slice(0, 2)
      const folded = await mind.backend.context.messagesById(items.map((item) => (item.kind === 'message' ? item.messageId : -1)))
      await mind.backend.context.replaceWithSummary(
        conversation.id,
        items.map((item) => item.position),
        { kind: 'leaf', depth: 0, content: 'Ada asked where the coffee machine is.', tokenCount: 8, sourceTokenCount: 12, earliestAt: folded[0]?.at as string, latestAt: folded[1]?.at as string, method: 'deterministic', messageIds: folded.map((m) => m.id) },
      )
      pg = await openPostgresBackend({ url, schema, agent: 'default', clock })
    })
    after(async () => {
      await pg?.close()
      await mind?.close()
      const handle = await openPostgres({ url, schema })
      try {
        await handle.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      } finally {
        await handle.close()
      }
      rmSync(out, { recursive: true, force: true })
      tmp.cleanup()
    })

    test('the same tree, the same conversation, and nothing twice', async () => {
      const report = await migrateBackend({ from: mind.backend, to: pg, agent: 'default' })
      assert.deepEqual(report.problems, [])
      assert.deepEqual([report.status, report.verification.differences], ['complete', []])
      const version = '0'
      const a = await exportMemory({ backend: mind.backend, agent: 'default', clock, skills: mind.skills, version }, join(out, 'a'))
      const b = await exportMemory({ backend: pg, agent: 'default', clock, skills: mind.skills, version }, join(out, 'b'))
      assert.deepEqual(b.problems, [])
      assert.deepEqual(tree(join(out, 'b')), tree(join(out, 'a')))
      for (const path of tree(join(out, 'a'))) {
        if (path === 'manifest.json') continue
        assert.equal(readFileSync(join(out, 'b', path), 'utf8'), readFileSync(join(out, 'a', path), 'utf8'), path)
      }
      assert.deepEqual(b.counts, a.counts)

      const view = async (backend: Backend) => {
        const conversation = await backend.context.findConversation('chat-ada', 'default')
        assert.ok(conversation)
        const messages = await backend.context.messages(conversation.id)
        const seq = new Map(messages.map((message) => [message.id, message.seq]))
        const items = await backend.context.items(conversation.id)
        const summaries = await backend.context.summariesById(items.flatMap((item) => (item.kind === 'summary' ? [item.summaryId] : [])))
        return {
          messages: messages.map(({ seq: s, role, content, at, tokenCount }) => ({ s, role, content, at, tokenCount })),
          items: items.map((item) => (item.kind === 'message' ? `m${seq.get(item.messageId)}` : `s ${summaries.find((summary) => summary.id === item.summaryId)?.content}`)),
        }
      }
      assert.deepEqual(await view(pg), await view(mind.backend))

      const again = await migrateBackend({ from: mind.backend, to: pg, agent: 'default' })
      assert.deepEqual([again.memory.entries, again.memory.documents, again.conversations.moved, again.activity.events, again.turns.moved], [0, 0, 0, 0, 0], JSON.stringify(again))
      assert.equal(again.status, 'complete')
    })
  })
})
