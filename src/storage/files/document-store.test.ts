import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { contentHash } from '../../core/hash.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import type { DocumentStore } from '../contracts.ts'
import { createFileDocumentStore } from './document-store.ts'
import { createFileLocks } from './locks.ts'

function setup(agent = 'default'): { temp: TempHome; clock: ManualClock; store: DocumentStore } {
  const temp = makeTempHome()
  const clock = new ManualClock('2026-03-04T10:00:00Z')
  const store = createFileDocumentStore({ home: temp.home, agent, clock, locks: createFileLocks({ dir: join(temp.home, 'locks') }) })
  return { temp, clock, store }
}

describe('file DocumentStore', () => {
  test('a document edited by hand is read as it is now, whatever was read before', async () => {
    const { temp, store } = setup()
    try {
      await store.write('user', 'ada', { name: 'Ada' }, '- Prefers tea.\n')
      assert.equal((await store.read('user', 'ada'))?.body, '- Prefers tea.\n')
      const file = join(temp.home, 'shared/users/ada.md')
      // Same size, in place (an editor that writes over the file).
      writeFileSync(file, readFileSync(file, 'utf8').replace('tea', 'tee'))
      assert.equal((await store.read('user', 'ada'))?.body, '- Prefers tee.\n')
      writeFileSync(file, '---\nname: Ada\n---\n- Prefers coffee now.\n')
      const doc = await store.read('user', 'ada')
      assert.equal(doc?.body, '- Prefers coffee now.\n')
      assert.equal(doc?.hash, contentHash(readFileSync(file)))
      await store.write('user', 'ada', { name: 'Ada' }, '- Written through the store.\n')
      assert.equal((await store.read('user', 'ada'))?.body, '- Written through the store.\n')
      rmSync(file)
      assert.equal(await store.read('user', 'ada'), null)
    } finally {
      temp.cleanup()
    }
  })

  test('a document rewritten in place with its times set back is read again, at equal and larger size', async () => {
    const { temp, store } = setup()
    try {
      await store.write('user', 'ada', { name: 'Ada' }, '- Prefers tea.\n')
      const file = join(temp.home, 'shared/users/ada.md')
      for (const body of ['- Prefers tee.\n', '- Prefers green tea, no sugar.\n']) {
        assert.ok((await store.read('user', 'ada'))?.body)
        const before = statSync(file)
        writeFileSync(file, `---\nname: Ada\n---\n${body}`)
        utimesSync(file, before.atimeMs / 1000, before.mtimeMs / 1000)
        assert.deepEqual([statSync(file).ino, statSync(file).mtimeMs], [before.ino, before.mtimeMs], 'the same file, its time set back')
        assert.equal((await store.read('user', 'ada'))?.body, body)
      }
    } finally {
      temp.cleanup()
    }
  })

  test('files land in the documented layout', async () => {
    const { temp, store } = setup('ada-bot')
    try {
      const cases = [
        ['knowledge', 'tea', 'agents/ada-bot/knowledge/tea.md'],
        ['procedure', 'deploy', 'agents/ada-bot/procedures/deploy.md'],
        ['episode', '2026-03-04', 'agents/ada-bot/episodes/2026-03-04.md'],
        ['state', 'current_task', 'agents/ada-bot/state/current_task.md'],
        ['prompt', 'SYSTEM', 'agents/ada-bot/SYSTEM.md'],
        ['user', 'ada', 'shared/users/ada.md'],
      ] as const
      for (const [kind, slug, path] of cases) {
        const doc = await store.write(kind, slug, { title: slug }, 'body\n')
        assert.equal(doc.path, path)
        const bytes = readFileSync(join(temp.home, path))
        assert.equal(bytes.toString(), `---\ntitle: ${slug}\n---\nbody\n`)
        assert.equal(doc.hash, contentHash(bytes))
      }
    } finally {
      temp.cleanup()
    }
  })

  test('versions and archive paths carry the clock time and the reason', async () => {
    const { temp, clock, store } = setup()
    try {
      await store.write('procedure', 'deploy', { version: 1 }, 'v1\n')
      await store.write('procedure', 'deploy', { version: 2 }, 'v2\n', { reason: 'reconsolidated after failure' })
      // Same instant again: a second copy, not an overwrite.
      await store.write('procedure', 'deploy', { version: 3 }, 'v3\n')
      clock.advance(1500)
      await store.write('procedure', 'deploy', { version: 4 }, 'v4\n')
      const versions = await store.versions('procedure', 'deploy')
      assert.deepEqual(versions, [
        { path: 'agents/default/archive/versions/procedure/deploy.2026-03-04T10-00-01-500Z.md', archivedAt: '2026-03-04T10:00:01.500Z' },
        { path: 'agents/default/archive/versions/procedure/deploy.2026-03-04T10-00-00-000Z-2.md', archivedAt: '2026-03-04T10:00:00.000Z' },
        { path: 'agents/default/archive/versions/procedure/deploy.2026-03-04T10-00-00-000Z.md', archivedAt: '2026-03-04T10:00:00.000Z' },
      ])
      assert.equal(readFileSync(join(temp.home, versions[2]?.path ?? ''), 'utf8'), '---\nversion: 1\n---\nv1\n')
      const log = readFileSync(join(temp.home, 'agents/default/archive/versions/versions.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line))
      assert.equal(log.length, 3)
      assert.equal(log[0].reason, 'reconsolidated after failure', 'the write that replaced v1 says why')
      assert.equal(log[1].reason, undefined)
      assert.equal(await store.archive('procedure', 'deploy', 'procedure_versions'), 'agents/default/archive/procedure_versions/procedure/deploy.md')
    } finally {
      temp.cleanup()
    }
  })

  test('version retention moves the older versions under their names, logs where they went with their reasons, and a version moved back is listed again', async () => {
    const { temp, clock, store } = setup()
    try {
      for (let n = 1; n <= 5; n++) {
        clock.advance(1000)
        await store.write('procedure', 'deploy', { version: n }, `v${n}\n`, { reason: `revision ${n}` })
      }
      const oldest = 'agents/default/archive/versions/procedure/deploy.2026-03-04T10-00-02-000Z.md'
      assert.equal((await store.versions('procedure', 'deploy')).at(-1)?.path, oldest)
      assert.deepEqual(await store.retainVersions('procedure', 'deploy', 2), [
        'agents/default/archive/forgotten/versions/procedure/deploy.2026-03-04T10-00-03-000Z.md',
        'agents/default/archive/forgotten/versions/procedure/deploy.2026-03-04T10-00-02-000Z.md',
      ])
      const retired = join(temp.home, 'agents/default/archive/forgotten/versions/procedure/deploy.2026-03-04T10-00-02-000Z.md')
      assert.equal(readFileSync(retired, 'utf8'), '---\nversion: 1\n---\nv1\n', 'the bytes move as they are')
      assert.ok(!existsSync(join(temp.home, oldest)))
      const log = readFileSync(join(temp.home, 'agents/default/archive/versions/versions.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line))
      assert.equal(log.length, 4 + 2, 'appended, the lines of the saves kept')
      assert.deepEqual(log[5], {
        at: '2026-03-04T10:00:05.000Z',
        kind: 'procedure',
        slug: 'deploy',
        path: 'agents/default/archive/forgotten/versions/procedure/deploy.2026-03-04T10-00-02-000Z.md',
        moved_from: oldest,
        archived_at: '2026-03-04T10:00:02.000Z',
        retention: 'older than the 2 newest versions',
        reason: 'revision 2',
      })
      // A person brings one back by moving it home; retention with a larger keep leaves it there.
      renameSync(retired, join(temp.home, oldest))
      assert.equal((await store.versions('procedure', 'deploy')).length, 3)
      assert.deepEqual(await store.retainVersions('procedure', 'deploy', 3), [])
    } finally {
      temp.cleanup()
    }
  })

  test('version retention finishes a move a kill cut before its log line: the line is written once, in the order an uncut run writes it', async () => {
    const { temp, clock, store } = setup()
    try {
      for (let n = 1; n <= 5; n++) {
        clock.advance(1000)
        await store.write('procedure', 'deploy', { version: n }, `v${n}\n`, { reason: `revision ${n}` })
      }
      const logPath = join(temp.home, 'agents/default/archive/versions/versions.jsonl')
      const lines = () => readFileSync(logPath, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { path: string; moved_from?: string })
      // The newest of the two older versions was moved, and the process died before its line.
      const name = 'deploy.2026-03-04T10-00-03-000Z.md'
      mkdirSync(join(temp.home, 'agents/default/archive/forgotten/versions/procedure'), { recursive: true })
      renameSync(join(temp.home, 'agents/default/archive/versions/procedure', name), join(temp.home, 'agents/default/archive/forgotten/versions/procedure', name))
      assert.deepEqual(await store.retainVersions('procedure', 'deploy', 2), ['agents/default/archive/forgotten/versions/procedure/deploy.2026-03-04T10-00-02-000Z.md'])
      const moves = lines().filter((line) => line.moved_from !== undefined)
      assert.deepEqual(
        moves.map((line) => line.path),
        ['agents/default/archive/forgotten/versions/procedure/deploy.2026-03-04T10-00-03-000Z.md', 'agents/default/archive/forgotten/versions/procedure/deploy.2026-03-04T10-00-02-000Z.md'],
      )
      assert.equal((moves[0] as { reason?: string }).reason, 'revision 3', 'the cut move keeps its reason')
      const before = readFileSync(logPath, 'utf8')
      assert.deepEqual(await store.retainVersions('procedure', 'deploy', 2), [])
      assert.equal(readFileSync(logPath, 'utf8'), before, 'a second run writes nothing')
    } finally {
      temp.cleanup()
    }
  })

  test('broken frontmatter: reported as a problem, body kept, file never rewritten by a read', async () => {
    const { temp, store } = setup()
    try {
      const dir = join(temp.home, 'agents/default/knowledge')
      mkdirSync(dir, { recursive: true })
      const broken = '---\ntitle: ok\nconfidence: [0.9\n---\nStill readable.\n'
      writeFileSync(join(dir, 'broken.md'), broken)
      writeFileSync(join(dir, 'plain.md'), 'No frontmatter here.\n')
      const doc = await store.read('knowledge', 'broken')
      assert.equal(doc?.body, broken)
      assert.deepEqual(doc?.frontmatter, {})
      assert.deepEqual((await store.read('knowledge', 'plain'))?.frontmatter, {})
      const problems = await store.problems()
      assert.equal(problems.length, 1)
      assert.equal(problems[0]?.file, 'agents/default/knowledge/broken.md')
      assert.match(problems[0]?.reason ?? '', /YAML/)
      assert.ok((problems[0]?.line ?? 0) >= 2)
      // Appending keeps the broken block byte for byte.
      await store.append('knowledge', 'broken', 'More.\n')
      assert.equal(readFileSync(join(dir, 'broken.md'), 'utf8'), `${broken}More.\n`)
      assert.equal(readFileSync(join(dir, 'broken.md'), 'utf8').startsWith(broken), true)
    } finally {
      temp.cleanup()
    }
  })

  test('hand edits are read; stray files and temp files are not listed', async () => {
    const { temp, store } = setup()
    try {
      const written = await store.write('knowledge', 'tea', { version: 1 }, 'Brew at 80°C.\n')
      const path = join(temp.home, written.path)
      writeFileSync(path, '---\nversion: 1\n---\nBrew at 75°C.\n')
      const read = await store.read('knowledge', 'tea')
      assert.equal(read?.body, 'Brew at 75°C.\n')
      assert.notEqual(read?.hash, written.hash)
      const dir = join(temp.home, 'agents/default/knowledge')
      writeFileSync(join(dir, '.tea.md.123.abc.tmp'), 'half written')
      writeFileSync(join(dir, 'notes.txt'), 'not markdown')
      assert.deepEqual(
        (await store.list('knowledge')).map((r) => r.slug),
        ['tea'],
      )
      // Prompt listing only sees the prompt layers, not other markdown at the agent root.
      writeFileSync(join(temp.home, 'agents/default/README.md'), 'hi')
      assert.deepEqual(await store.list('prompt'), [])
      assert.ok(existsSync(join(temp.home, 'agents/default/README.md')))
      assert.deepEqual(readdirSync(dir).sort(), ['.tea.md.123.abc.tmp', 'notes.txt', 'tea.md'])
    } finally {
      temp.cleanup()
    }
  })

  test('an unsafe agent name is rejected', () => {
    const temp = makeTempHome()
    try {
      assert.throws(
        () => createFileDocumentStore({ home: temp.home, agent: '../x', clock: new ManualClock(), locks: createFileLocks({ dir: join(temp.home, 'locks') }) }),
        { code: 'invalid_argument' },
      )
    } finally {
      temp.cleanup()
    }
  })
})

describe('file DocumentStore: files it cannot read (decision 0025)', () => {
  test('a folder, a pipe, a link loop or a link out is listed nowhere, read as absent, reported, and never written over', async () => {
    const { temp, store } = setup()
    try {
      const folder = join(temp.home, 'agents/default/knowledge')
      mkdirSync(join(folder, 'notes.md'), { recursive: true })
      execFileSync('mkfifo', [join(folder, 'pipe.md')])
      symlinkSync('loop.md', join(folder, 'loop.md'))
      writeFileSync(join(temp.home, 'secret.md'), 'outside secret\n')
      symlinkSync(join(temp.home, 'secret.md'), join(folder, 'secret.md'))
      await store.write('knowledge', 'tea', {}, 'Green tea.\n')
      assert.deepEqual((await store.list('knowledge')).map((ref) => ref.slug), ['tea'])
      for (const slug of ['notes', 'pipe', 'loop', 'secret']) assert.equal(await store.read('knowledge', slug), null, slug)
      assert.deepEqual(
        (await store.problems()).map((p) => [p.file, p.reason]),
        [
          ['agents/default/knowledge/loop.md', 'a symbolic link loop'],
          ['agents/default/knowledge/notes.md', 'a folder, not a file'],
          ['agents/default/knowledge/pipe.md', 'a named pipe, not a file'],
          ['agents/default/knowledge/secret.md', 'a symbolic link that leads outside its memory folder'],
        ],
      )
      for (const slug of ['notes', 'pipe', 'secret']) {
        await assert.rejects(store.write('knowledge', slug, {}, 'new\n'), { code: 'storage_unavailable' }, slug)
        await assert.rejects(store.append('knowledge', slug, 'more\n'), { code: 'storage_unavailable' }, slug)
      }
      assert.equal(readFileSync(join(temp.home, 'secret.md'), 'utf8'), 'outside secret\n')
      assert.equal(existsSync(join(temp.home, 'agents/default/archive/versions/knowledge')), false, 'no version of the outside file was copied in')
    } finally {
      temp.cleanup()
    }
  })

  test('an append keeps the bytes that are there, UTF-8 or not', async () => {
    const { temp, store } = setup()
    try {
      const file = join(temp.home, 'agents/default/episodes/2026-03-04.md')
      mkdirSync(join(file, '..'), { recursive: true })
      const old = Buffer.from('# 2026-03-04\ncaf\xe9', 'latin1')
      writeFileSync(file, old)
      await store.append('episode', '2026-03-04', '## 10:00\nTea.\n')
      assert.deepEqual(readFileSync(file), Buffer.concat([old, Buffer.from('\n## 10:00\nTea.\n')]))
    } finally {
      temp.cleanup()
    }
  })

  test('a write repeated at the same instant after a crash saves the old version once (decision 0053)', async () => {
    const { temp, store } = setup()
    try {
      const at = '2026-03-04T18:00:00.000Z'
      await store.write('knowledge', 'deploys', { version: 1 }, 'Kamal.\n')
      const live = join(temp.home, 'agents/default/knowledge/deploys.md')
      const versions = join(temp.home, 'agents/default/archive/versions/knowledge')
      // The crash: the version was saved (file and log line) and the file never replaced.
      mkdirSync(versions, { recursive: true })
      writeFileSync(join(versions, 'deploys.2026-03-04T18-00-00-000Z.md'), readFileSync(live))
      await store.write('knowledge', 'deploys', { version: 2 }, 'Fly.io.\n', { reason: 'moved', at })
      assert.deepEqual(readdirSync(versions), ['deploys.2026-03-04T18-00-00-000Z.md'])
      const log = readFileSync(join(temp.home, 'agents/default/archive/versions/versions.jsonl'), 'utf8').trim().split('\n')
      assert.equal(log.length, 1, 'the log line the crash did not write is written once')
      assert.equal(JSON.parse(log[0] as string).reason, 'moved')
      assert.equal((await store.read('knowledge', 'deploys'))?.body, 'Fly.io.\n')
      // Another change at the same instant is a new version (the last one holds other bytes).
      await store.write('knowledge', 'deploys', { version: 3 }, 'Render.\n', { reason: 'moved again', at })
      assert.equal(readdirSync(versions).length, 2)
    } finally {
      temp.cleanup()
    }
  })

  test('a write repeated at the same instant after a crash cut its version copy short saves the old version whole, once', async () => {
    const { temp, store } = setup()
    try {
      const at = '2026-03-04T18:00:00.000Z'
      await store.write('knowledge', 'deploys', { version: 1 }, 'Kamal, with a long note on why.\n')
      const live = join(temp.home, 'agents/default/knowledge/deploys.md')
      const versions = join(temp.home, 'agents/default/archive/versions/knowledge')
      const whole = readFileSync(live)
      // The crash: the version's copy had written half the file, no log line, the file not replaced.
      mkdirSync(versions, { recursive: true })
      writeFileSync(join(versions, 'deploys.2026-03-04T18-00-00-000Z.md'), whole.subarray(0, Math.floor(whole.length / 2)))
      await store.write('knowledge', 'deploys', { version: 2 }, 'Fly.io.\n', { reason: 'moved', at })
      assert.deepEqual(readdirSync(versions), ['deploys.2026-03-04T18-00-00-000Z.md'], 'no second version beside the cut one')
      assert.deepEqual(readFileSync(join(versions, 'deploys.2026-03-04T18-00-00-000Z.md')), whole, 'the version holds the old file whole')
      const log = readFileSync(join(temp.home, 'agents/default/archive/versions/versions.jsonl'), 'utf8').trim().split('\n')
      assert.equal(log.length, 1)
      assert.equal((await store.read('knowledge', 'deploys'))?.body, 'Fly.io.\n')
      // A logged version at the same instant is another write's, kept: the next change is a second version.
      await store.write('knowledge', 'deploys', { version: 3 }, 'Render.\n', { reason: 'moved again', at })
      assert.equal(readdirSync(versions).length, 2)
    } finally {
      temp.cleanup()
    }
  })

  test('a write repeated at the same instant after it took effect saves no second version (decision 0053)', async () => {
    const { temp, store } = setup()
    try {
      const at = '2026-03-04T18:00:00.000Z'
      await store.write('knowledge', 'deploys', { version: 1 }, 'Kamal.\n')
      await store.write('knowledge', 'deploys', { version: 2 }, 'Fly.io.\n', { reason: 'moved', at })
      // The crash came after the file was replaced, before the unit was marked done: the unit runs again.
      await store.write('knowledge', 'deploys', { version: 2 }, 'Fly.io.\n', { reason: 'moved', at })
      const versions = join(temp.home, 'agents/default/archive/versions/knowledge')
      assert.deepEqual(readdirSync(versions), ['deploys.2026-03-04T18-00-00-000Z.md'])
      assert.equal(readFileSync(join(versions, 'deploys.2026-03-04T18-00-00-000Z.md'), 'utf8').includes('Kamal.'), true)
      assert.equal(readFileSync(join(temp.home, 'agents/default/archive/versions/versions.jsonl'), 'utf8').trim().split('\n').length, 1)
      assert.equal((await store.read('knowledge', 'deploys'))?.body, 'Fly.io.\n')
    } finally {
      temp.cleanup()
    }
  })

  test('archiving finishes a move a crash cut between its link and its unlink', async () => {
    const { temp, store } = setup()
    try {
      await store.write('knowledge', 'tea-old', { merged_into: 'tea' }, 'Green tea.\n')
      const live = join(temp.home, 'agents/default/knowledge/tea-old.md')
      const target = join(temp.home, 'agents/default/archive/merged/knowledge/tea-old.md')
      mkdirSync(join(target, '..'), { recursive: true })
      writeFileSync(target, readFileSync(live))
      await store.archive('knowledge', 'tea-old', 'merged')
      assert.equal(existsSync(live), false)
      assert.match(readFileSync(target, 'utf8'), /Green tea/)
      assert.equal(existsSync(join(temp.home, 'agents/default/archive/versions/knowledge')), false, 'no version of the archived copy was kept: it was the live file')
    } finally {
      temp.cleanup()
    }
  })
})
