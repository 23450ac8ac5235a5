/**
 * Contract suite for DocumentStore: every backend (files, PostgreSQL rows) must pass it.
 * Call it from a `*.test.ts` file with a factory that returns a fresh, empty store.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ManualClock } from '../../core/clock.ts'
import { parseFrontmatter } from '../../core/frontmatter.ts'
import type { DocumentStore } from '../contracts.ts'

export interface DocumentStoreFixture {
  store: DocumentStore
  cleanup(): Promise<void>
  /** The store's clock, when the factory controls it: enables the version-ordering checks. */
  clock?: ManualClock
}

const KNOWLEDGE = {
  created_at: '2026-02-18T03:00:00+09:00',
  updated_at: '2026-02-18T03:00:00+09:00',
  source_episodes: 3,
  confidence: 0.9,
  auto_consolidated: true,
  version: 1,
}

/** Registers the DocumentStore contract tests under `describe(name)`. */
export function runDocumentStoreContract(name: string, make: () => Promise<DocumentStoreFixture>): void {
  async function withStore(fn: (fixture: DocumentStoreFixture) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture)
    } finally {
      await fixture.cleanup()
    }
  }

  describe(`DocumentStore contract: ${name}`, () => {
    test('write, read and list a document; frontmatter dates stay strings', () =>
      withStore(async ({ store }) => {
        assert.equal(await store.read('knowledge', 'green-tea'), null)
        assert.deepEqual(await store.list('knowledge'), [])
        const written = await store.write('knowledge', 'green-tea', KNOWLEDGE, '# Green tea\nBrew at 80°C.\n')
        assert.equal(written.kind, 'knowledge')
        assert.equal(written.slug, 'green-tea')
        assert.match(written.path, /(^|\/)knowledge\/green-tea\.md$/)
        assert.match(written.hash, /^[0-9a-f]{64}$/)
        const read = await store.read('knowledge', 'green-tea')
        assert.deepEqual(read, written)
        assert.deepEqual(read?.frontmatter, KNOWLEDGE)
        assert.equal(read?.body, '# Green tea\nBrew at 80°C.\n')
        const [ref, ...rest] = await store.list('knowledge')
        assert.deepEqual(rest, [])
        assert.equal(ref?.slug, 'green-tea')
        assert.equal(ref?.path, written.path)
        assert.equal(ref?.hash, written.hash)
        assert.ok(!Number.isNaN(Date.parse(ref?.modifiedAt ?? '')))
        assert.deepEqual(await store.list('procedure'), [], 'kinds do not mix')
      }))

    test('every kind round-trips', () =>
      withStore(async ({ store }) => {
        await store.write('procedure', 'deploy', { description: 'How to deploy', success_count: 0, failure_count: 0 }, '1. build\n')
        await store.write('episode', '2026-03-04', {}, '## 10:00 Talked about tea\n')
        await store.write('state', 'current_task', {}, 'Writing docs\n')
        await store.write('prompt', 'SOUL', {}, 'You are curious.\n')
        await store.write('user', 'ada', { name: 'Ada' }, 'Likes maths.\n')
        assert.equal((await store.read('procedure', 'deploy'))?.frontmatter.description, 'How to deploy')
        assert.equal((await store.read('episode', '2026-03-04'))?.body, '## 10:00 Talked about tea\n')
        assert.deepEqual((await store.read('state', 'current_task'))?.frontmatter, {})
        assert.equal((await store.read('prompt', 'SOUL'))?.body, 'You are curious.\n')
        assert.equal((await store.read('user', 'ada'))?.body, 'Likes maths.\n')
        assert.deepEqual(
          (await store.list('prompt')).map((r) => r.slug),
          ['SOUL'],
        )
        assert.deepEqual(
          (await store.list('user')).map((r) => r.slug),
          ['ada'],
        )
      }))

    test('a rewrite keeps the old version; versions are newest first', () =>
      withStore(async ({ store, clock }) => {
        const first = await store.write('knowledge', 'tea', { version: 1 }, 'first\n')
        assert.deepEqual(await store.versions('knowledge', 'tea'), [])
        clock?.advance(60_000)
        const second = await store.write('knowledge', 'tea', { version: 2 }, 'second\n', { reason: 'reconsolidated' })
        assert.notEqual(second.hash, first.hash)
        clock?.advance(60_000)
        await store.write('knowledge', 'tea', { version: 3 }, 'third\n')
        const versions = await store.versions('knowledge', 'tea')
        assert.equal(versions.length, 2)
        if (clock) assert.ok((versions[0]?.archivedAt ?? '') > (versions[1]?.archivedAt ?? ''), 'newest first')
        for (const version of versions) assert.ok(!Number.isNaN(Date.parse(version.archivedAt)), version.archivedAt)
        assert.equal((await store.read('knowledge', 'tea'))?.body, 'third\n')
        assert.deepEqual(await store.versions('knowledge', 'te'), [], 'a prefix of the slug is another document')
      }))

    test('a write with `at` stamps its saved version with that instant; the same change repeated saves nothing twice', () =>
      withStore(async ({ store }) => {
        const at = '2026-03-04T18:00:00.000Z'
        await store.write('knowledge', 'deploys', { version: 1 }, 'Kamal.\n')
        await store.write('knowledge', 'deploys', { version: 2 }, 'Fly.io.\n', { reason: 'moved', at })
        assert.deepEqual((await store.versions('knowledge', 'deploys')).map((version) => version.archivedAt), [at])
        // A plan applied again after a crash: the document already holds its text, so nothing is written (unit-plan.ts).
        const doc = await store.read('knowledge', 'deploys')
        assert.equal(doc?.body, 'Fly.io.\n')
        // And should the same write come again at its instant, it is done already: no second version.
        await store.write('knowledge', 'deploys', { version: 2 }, 'Fly.io.\n', { reason: 'moved', at })
        assert.deepEqual((await store.versions('knowledge', 'deploys')).map((version) => version.archivedAt), [at])
        await store.write('knowledge', 'deploys', { version: 3 }, 'Render.\n', { reason: 'moved again', at })
        assert.equal((await store.versions('knowledge', 'deploys')).length, 2, 'another change at the same instant is another version')
      }))

    test('append creates, then appends without versioning', () =>
      withStore(async ({ store }) => {
        const created = await store.append('episode', '2026-03-04', '## 09:00 Start\n', { date: '2026-03-04' })
        assert.equal(created.body, '## 09:00 Start\n')
        assert.deepEqual(created.frontmatter, { date: '2026-03-04' })
        const appended = await store.append('episode', '2026-03-04', '## 10:00 More\n')
        assert.equal(appended.body, '## 09:00 Start\n## 10:00 More\n')
        assert.deepEqual(appended.frontmatter, { date: '2026-03-04' })
        assert.deepEqual(await store.read('episode', '2026-03-04'), appended)
        assert.deepEqual(await store.versions('episode', '2026-03-04'), [])
      }))

    test('archive moves a document out; restore brings it back', () =>
      withStore(async ({ store }) => {
        const original = await store.write('knowledge', 'old-fact', { confidence: 0.2 }, 'Outdated.\n')
        const where = await store.archive('knowledge', 'old-fact', 'forgotten')
        assert.match(where, /archive\/forgotten\/knowledge\/old-fact\.md$/)
        assert.equal(await store.read('knowledge', 'old-fact'), null)
        assert.deepEqual(await store.list('knowledge'), [])
        await assert.rejects(store.restore('knowledge', 'old-fact', 'merged'), { code: 'not_found' })
        const restored = await store.restore('knowledge', 'old-fact', 'forgotten')
        assert.equal(restored.hash, original.hash)
        assert.deepEqual(restored.frontmatter, { confidence: 0.2 })
        assert.equal((await store.list('knowledge')).length, 1)
        await assert.rejects(store.archive('knowledge', 'missing', 'forgotten'), { code: 'not_found' })
      }))

    test('restore refuses to replace a live document, with a fix', () =>
      withStore(async ({ store }) => {
        await store.write('knowledge', 'fact', {}, 'old\n')
        await store.archive('knowledge', 'fact', 'merged')
        await store.write('knowledge', 'fact', {}, 'new\n')
        await assert.rejects(store.restore('knowledge', 'fact', 'merged'), (error: unknown) => {
          const e = error as { code?: string; fix?: string }
          assert.equal(e.code, 'invalid_argument')
          assert.match(e.fix ?? '', /first/)
          return true
        })
        assert.equal((await store.read('knowledge', 'fact'))?.body, 'new\n', 'the live document is untouched')
      }))

    test('archiving the same slug twice loses neither copy', () =>
      withStore(async ({ store }) => {
        await store.write('procedure', 'p', {}, 'one\n')
        await store.archive('procedure', 'p', 'forgotten')
        await store.write('procedure', 'p', {}, 'two\n')
        await store.archive('procedure', 'p', 'forgotten')
        assert.equal((await store.restore('procedure', 'p', 'forgotten')).body, 'two\n')
        assert.equal((await store.versions('procedure', 'p')).length, 1, 'the older archived copy became a version')
      }))

    test('purge erases a document, its archived copies and its versions, and nothing else', () =>
      withStore(async ({ store }) => {
        await store.write('knowledge', 'salary', {}, 'one\n')
        await store.write('knowledge', 'salary', {}, 'two\n')
        await store.archive('knowledge', 'salary', 'forgotten')
        await store.write('knowledge', 'salary', {}, 'three\n')
        await store.write('knowledge', 'tea', {}, 'kept\n')
        await store.write('knowledge', 'tea', {}, 'kept, rewritten\n')
        const removed = await store.purge('knowledge', 'salary')
        assert.equal(removed.length, 3, removed.join(', '))
        assert.equal(await store.read('knowledge', 'salary'), null)
        assert.deepEqual(await store.versions('knowledge', 'salary'), [])
        await assert.rejects(store.restore('knowledge', 'salary', 'forgotten'), { code: 'not_found' })
        assert.equal((await store.read('knowledge', 'tea'))?.body, 'kept, rewritten\n')
        assert.equal((await store.versions('knowledge', 'tea')).length, 1)
        assert.deepEqual(await store.purge('knowledge', 'salary'), [])
      }))

    test('retainVersions keeps the newest versions and moves the older ones out of versions(); purge still removes them', () =>
      withStore(async ({ store, clock }) => {
        for (let n = 1; n <= 8; n++) {
          clock?.advance(60_000)
          await store.write('procedure', 'deploy', { version: n }, `step ${n}\n`, { reason: `revision ${n}` })
        }
        await store.write('procedure', 'other', {}, 'one\n')
        await store.write('procedure', 'other', {}, 'two\n')
        const before = await store.versions('procedure', 'deploy')
        assert.equal(before.length, 7)
        const live = await store.read('procedure', 'deploy')

        const moved = await store.retainVersions('procedure', 'deploy', 5)
        assert.equal(moved.length, 2, moved.join(', '))
        for (const path of moved) assert.match(path, /(^|\/)archive\/forgotten\/versions\/procedure\/deploy\.[^/]+\.md$/)
        // Same file names: each moved version is one of the two oldest.
        assert.deepEqual(
          moved.map((path) => path.split('/').pop()),
          before.slice(5).map((version) => version.path.split('/').pop()),
        )
        assert.deepEqual(await store.versions('procedure', 'deploy'), before.slice(0, 5), 'the five newest stay where they were, newest first')
        assert.deepEqual(await store.read('procedure', 'deploy'), live, 'the live document is untouched')
        assert.equal((await store.versions('procedure', 'other')).length, 1, 'another document keeps its versions')

        assert.deepEqual(await store.retainVersions('procedure', 'deploy', 5), [], 'a second run moves nothing')
        assert.deepEqual(await store.retainVersions('procedure', 'other', 5), [], 'fewer versions than kept: nothing to move')
        assert.deepEqual(await store.retainVersions('procedure', 'missing', 5), [])

        const removed = await store.purge('procedure', 'deploy')
        assert.equal(removed.length, 1 + 5 + 2, removed.join(', '))
        for (const path of moved) assert.ok(removed.includes(path), `purge removed ${path}`)
        assert.deepEqual(await store.versions('procedure', 'deploy'), [])
        assert.deepEqual(await store.purge('procedure', 'deploy'), [])
        assert.equal((await store.versions('procedure', 'other')).length, 1)
      }))

    test('retainVersions refuses a keep that is not a whole number of versions, and unsafe slugs', () =>
      withStore(async ({ store }) => {
        await store.write('procedure', 'deploy', {}, 'one\n')
        await store.write('procedure', 'deploy', {}, 'two\n')
        for (const keep of [-1, 1.5, Number.NaN]) await assert.rejects(store.retainVersions('procedure', 'deploy', keep), { code: 'invalid_argument' }, String(keep))
        await assert.rejects(store.retainVersions('procedure', '../escape', 5), { code: 'invalid_argument' })
        assert.equal((await store.retainVersions('procedure', 'deploy', 0)).length, 1, 'keep 0 moves every version')
        assert.deepEqual(await store.versions('procedure', 'deploy'), [])
        assert.equal((await store.read('procedure', 'deploy'))?.body, 'two\n')
      }))

    test('slugs lists what list lists, without reading; problems can be asked of some kinds only', () =>
      withStore(async ({ store }) => {
        await store.write('knowledge', 'b-note', KNOWLEDGE, 'b')
        await store.write('knowledge', 'a-note', KNOWLEDGE, 'a')
        await store.append('episode', '2026-03-02', '# 2026-03-02\n')
        assert.deepEqual(await store.slugs('knowledge'), ['a-note', 'b-note'])
        assert.deepEqual(await store.slugs('knowledge'), (await store.list('knowledge')).map((ref) => ref.slug))
        assert.deepEqual(await store.slugs('episode'), ['2026-03-02'])
        assert.deepEqual(await store.slugs('procedure'), [])
        assert.deepEqual(await store.problems(['knowledge', 'procedure']), [])
      }))

    test('readArchived reads an archived copy and a saved version by the path they were given; archivedPaths lists them', () =>
      withStore(async ({ store, clock }) => {
        if (!store.readArchived) return
        await store.write('knowledge', 'tea', { version: 1 }, 'first\n')
        clock?.advance(60_000)
        await store.write('knowledge', 'tea', { version: 2 }, 'second\n')
        const [version] = await store.versions('knowledge', 'tea')
        assert.ok(version)
        const old = parseFrontmatter((await store.readArchived(version.path)) ?? '')
        assert.deepEqual(old.frontmatter, { version: 1 })
        assert.equal(old.body, 'first\n')
        const archived = await store.archive('knowledge', 'tea', 'forgotten')
        assert.equal(parseFrontmatter((await store.readArchived(archived)) ?? '').body, 'second\n')
        if (store.archivedPaths) assert.deepEqual(await store.archivedPaths(), [archived, version.path].sort())
        for (const path of [archived.replace('/tea.md', '/coffee.md'), 'knowledge/tea.md', archived.replace(/^.*?archive\//, 'elsewhere/archive/'), `${archived}/../../x.md`, '']) {
          assert.equal(await store.readArchived(path), null, path)
        }
        const [retired] = await store.retainVersions('knowledge', 'tea', 0)
        assert.ok(retired)
        assert.equal(await store.readArchived(version.path), null, 'moved out of versions/')
        assert.equal(parseFrontmatter((await store.readArchived(retired)) ?? '').body, 'first\n')
        if (store.archivedPaths) assert.deepEqual(await store.archivedPaths(), [archived, retired].sort())
        await store.restore('knowledge', 'tea', 'forgotten')
        assert.equal(await store.readArchived(archived), null, 'restored: no longer archived')
      }))

    test('putArchived puts copies and versions another store gave as they are: restore and versions find them, a rerun changes nothing', () =>
      withStore(async ({ store, clock }) => {
        if (!store.readArchived || !store.archivedPaths || !store.putArchived) return
        await store.write('knowledge', 'tea', { version: 1 }, 'first\n')
        clock?.advance(60_000)
        await store.write('knowledge', 'tea', { version: 2 }, 'second\n')
        clock?.advance(60_000)
        await store.write('knowledge', 'tea', { version: 3 }, 'third\n')
        await store.archive('knowledge', 'tea', 'forgotten')
        await store.write('knowledge', 'merged-away', {}, 'folded into tea\n')
        await store.archive('knowledge', 'merged-away', 'merged')
        const paths = await store.archivedPaths()
        assert.equal(paths.length, 4)
        const texts = new Map<string, string>()
        for (const path of paths) texts.set(path, (await store.readArchived(path)) ?? '')
        const versions = await store.versions('knowledge', 'tea')

        const other = await make()
        try {
          const target = other.store
          assert.ok(target.putArchived && target.archivedPaths && target.readArchived)
          for (const [path, text] of texts) assert.equal(await target.putArchived(path, text), 'written', path)
          for (const [path, text] of texts) assert.equal(await target.putArchived(path, text), 'there', path)
          assert.equal(await target.putArchived(paths[0] as string, '---\nversion: 9\n---\nother\n'), 'occupied')
          assert.deepEqual(await target.archivedPaths(), paths)
          for (const [path, text] of texts) assert.equal(await target.readArchived(path), text, path)
          assert.deepEqual(await target.versions('knowledge', 'tea'), versions)
          assert.equal((await target.restore('knowledge', 'tea', 'forgotten')).body, 'third\n')
          assert.equal((await target.restore('knowledge', 'merged-away', 'merged')).body, 'folded into tea\n')
          for (const path of ['knowledge/tea.md', 'elsewhere/archive/forgotten/knowledge/tea.md', `${paths[0]}/../x.md`]) {
            await assert.rejects(target.putArchived(path, 'x'), { code: 'invalid_argument' }, path)
          }
        } finally {
          await other.cleanup()
        }
      }))

    test('unsafe slugs are rejected with invalid_argument', () =>
      withStore(async ({ store }) => {
        for (const slug of ['', '../escape', 'a/b', '/etc/passwd', 'x\u0000y', '..', 'a\\b']) {
          await assert.rejects(store.write('knowledge', slug, {}, 'x'), { code: 'invalid_argument' }, JSON.stringify(slug))
          await assert.rejects(store.read('knowledge', slug), { code: 'invalid_argument' }, JSON.stringify(slug))
        }
        await assert.rejects(store.write('episode', 'yesterday', {}, 'x'), { code: 'invalid_argument' })
        await assert.rejects(store.write('prompt', 'OTHER', {}, 'x'), { code: 'invalid_argument' })
        assert.deepEqual(await store.problems(), [])
      }))
  })
}
