import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { serializeFrontmatter } from '../../core/frontmatter.ts'
import { contentHash } from '../../core/hash.ts'
import { createPostgresDocumentStore } from './document-store.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

onPostgres('DocumentStore rows', (url) => {
  test('owners keep their own documents; profiles are shared and prompt layers the agent\'s, whatever the owner', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const agentStore = createPostgresDocumentStore(handle, { agent: 'a', clock })
      const ada = createPostgresDocumentStore(handle, { agent: 'a', owner: 'user:ada', clock })
      const shared = createPostgresDocumentStore(handle, { agent: 'b', owner: 'shared', clock })
      const otherAgent = createPostgresDocumentStore(handle, { agent: 'b', clock })
      const written = await ada.write('knowledge', 'salary', {}, 'private\n')
      assert.equal(written.path, 'agents/a/users/ada/knowledge/salary.md')
      assert.equal(await agentStore.read('knowledge', 'salary'), null)
      assert.equal(await otherAgent.read('knowledge', 'salary'), null)
      await shared.write('knowledge', 'office', {}, 'everyone\n')
      assert.equal((await createPostgresDocumentStore(handle, { agent: 'a', owner: 'shared', clock }).read('knowledge', 'office'))?.path, 'shared/knowledge/office.md')
      await ada.write('user', 'ada', { name: 'Ada' }, 'Likes maths.\n')
      assert.equal((await otherAgent.read('user', 'ada'))?.path, 'shared/users/ada.md')
      await ada.write('user', 'ada', { name: 'Ada L.' }, 'Likes maths.\n')
      assert.match((await agentStore.versions('user', 'ada'))[0]?.path ?? '', /^shared\/users\/\.history\/ada\/archive\/versions\/user\/ada\./)
      await ada.write('prompt', 'SOUL', {}, 'curious\n')
      assert.equal((await agentStore.read('prompt', 'SOUL'))?.path, 'agents/a/SOUL.md')
      assert.equal(await otherAgent.read('prompt', 'SOUL'), null)
    } finally {
      await cleanup()
    }
  })

  test('rewrites at the same instant, from many processes at once, keep every version under distinct names', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const stores = Array.from({ length: 6 }, () => createPostgresDocumentStore(handle, { agent: 'a', clock }))
      await stores[0]?.write('procedure', 'deploy', {}, 'v0\n')
      await Promise.all(stores.map((store, i) => store.write('procedure', 'deploy', { n: i + 1 }, `v${i + 1}\n`)))
      const versions = await stores[0]?.versions('procedure', 'deploy')
      assert.equal(versions?.length, 6, 'every replaced text was saved')
      assert.equal(new Set(versions?.map((v) => v.path)).size, 6)
      assert.ok(versions?.some((v) => v.path.endsWith('deploy.2026-03-04T10-00-00-000Z-6.md')), versions?.map((v) => v.path).join(', '))
    } finally {
      await cleanup()
    }
  })

  test('the hash is of the file an export writes; NUL is refused with the reason; a hand-edited row is reported', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const store = createPostgresDocumentStore(handle, { agent: 'a', clock: new ManualClock('2026-03-04T10:00:00Z') })
      const written = await store.append('episode', '2026-03-04', '## 09:00 Start', { date: '2026-03-04' })
      const appended = await store.append('episode', '2026-03-04', '## 10:00 More\n')
      assert.equal(appended.body, '## 09:00 Start\n## 10:00 More\n')
      assert.equal(appended.hash, contentHash(serializeFrontmatter(appended.frontmatter, appended.body)))
      assert.notEqual(written.hash, appended.hash)
      await assert.rejects(store.write('knowledge', 'x', {}, 'a\u0000b'), { code: 'invalid_argument' })
      await store.write('knowledge', 'edited', {}, 'x\n')
      await handle.pool.query(`UPDATE docs_live SET frontmatter = '[1]' WHERE slug = 'edited'`)
      assert.deepEqual(await store.problems(['knowledge']), [{ file: 'agents/a/knowledge/edited.md', line: 1, text: '[1]', reason: 'the frontmatter is not a mapping' }])
    } finally {
      await cleanup()
    }
  })
})
