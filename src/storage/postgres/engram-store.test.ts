import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startChild } from '../files/test-support/run-children.ts'
import { ManualClock } from '../../core/clock.ts'
import type { EngramEntry } from '../../core/engram.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import type { EngramStore } from '../contracts.ts'
import { createFileEngramStore } from '../files/engram-store.ts'
import { createFileLocks } from '../files/locks.ts'
import type { PostgresHandle } from './connection.ts'
import { createPostgresEngramStore } from './engram-store.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

const ENCODE_WORKER = join(import.meta.dirname, 'test-support', 'pg-encode-lessons.ts')

function lesson(text: string, extra: Partial<EngramEntry> = {}): EngramEntry {
  return { text, kind: 'lesson', meta: {}, ...extra }
}

async function rowText(handle: PostgresHandle, file: string, agent = 'default', owner = 'agent'): Promise<string | undefined> {
  const { rows } = await handle.pool.query<{ text: string }>(`SELECT text FROM engram_files WHERE agent = $1 AND owner = $2 AND scope = 'global' AND file = $3`, [agent, owner, file])
  return rows[0]?.text
}

/**
 * Starts `workers` child processes encoding lessons into agent `default`'s store in `handle`'s
 * schema, lets them go at once, and returns how many lessons each added.
 */
async function encodeInWorkers(url: string, handle: PostgresHandle, workers: number, count: number, mode: 'distinct' | 'same', whileRunning?: () => Promise<void>): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-pg-engrams-'))
  try {
    const startFile = join(dir, 'start')
    const children = Array.from({ length: workers }, (_, w) => {
      const child = startChild(ENCODE_WORKER, [url, handle.schema, String(w), String(count), mode, startFile], `worker ${w}`)
      return { ready: child.ready, added: child.lastLine.then((line) => Number(line)) }
    })
    await Promise.all(children.map((child) => child.ready))
    writeFileSync(startFile, 'go')
    const [added] = await Promise.all([Promise.all(children.map((child) => child.added)), whileRunning?.()])
    return added
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

onPostgres('EngramStore rows', (url) => {
  test('each file is one row holding the text the file store writes for the same calls', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    const temp = makeTempHome()
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const dir = join(temp.home, 'memory')
      const files = createFileEngramStore({ dir, scope: 'global', locks: createFileLocks({ dir: join(temp.home, 'locks') }), clock })
      const rows = createPostgresEngramStore(handle, { agent: 'default', scope: 'global', clock })
      for (const store of [files, rows]) {
        await store.encodeRule({ text: 'Use httpx instead of requests', kind: 'always', meta: {}, confidence: 'high', source: 'user' })
        await store.encodeRule({ text: 'Guess facts', kind: 'never', meta: {} })
        await store.encodeRule({ text: 'use HTTPX instead of requests.', kind: 'always', meta: {} })
        await store.encodeLesson(lesson('CoinGecko free tier rate-limits at ~50 req/min', { topic: 'API: CoinGecko' }))
        await store.encodeLesson(lesson('Never write <!-- in a lesson\nsecond line \u0000 with a NUL', { meta: { cell: '12' } }))
        await store.rewriteIdentity([{ text: 'Name: Jorge', kind: 'profile', meta: {} }])
        await store.rewriteAll('lessons', (current) => [...current, lesson('added by a rewrite', { ts: '2026-01-01' })])
      }
      for (const file of ['rules', 'lessons', 'profile', 'topics/api-coingecko']) {
        assert.equal(await rowText(handle, file), readFileSync(join(dir, `${file}.md`), 'utf8'), file)
      }
      assert.equal(
        await rowText(handle, 'rules'),
        '# Rules\n\n## Always\n- Use httpx instead of requests <!-- confidence:high source:user ts:2026-03-04 -->\n\n## Never\n- Guess facts <!-- ts:2026-03-04 -->\n\n## When\n',
      )
      assert.deepEqual(await rows.listTopics(), await files.listTopics())
      assert.equal(await rows.recallTopic('api-coingecko'), await files.recallTopic('api-coingecko'))
      assert.deepEqual(await rows.recallLessons(), await files.recallLessons())
      assert.ok((await rows.recallLessons()).some((entry) => entry.text.includes('\u0000')), 'a NUL in the text is escaped by the codec and read back')
      assert.match(rows.location, /^postgres:postgres:\/\/.*#default\/agent\/global$/)
    } finally {
      temp.cleanup()
      await cleanup()
    }
  })

  test('unreadable lines are reported with the home path and kept through every write; nothing is created by reading or by a rewrite that changes nothing', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const store = createPostgresEngramStore(handle, { agent: 'default', scope: 'global', clock: new ManualClock('2026-03-04T10:00:00Z') })
      await store.recallRules()
      await store.rewriteAll('rules', () => null)
      assert.equal((await handle.pool.query('SELECT count(*)::int AS n FROM engram_files')).rows[0]?.n, 0)
      await store.encodeLesson(lesson('First real lesson', { ts: '2026-01-01' }))
      const edited = ['# Lessons', '- First real lesson <!-- ts:2026-01-01 -->', 'TODO: tidy this file up', '- broken <!-- ts 2026 -->', ''].join('\n')
      await handle.pool.query(`UPDATE engram_files SET text = $1 WHERE file = 'lessons'`, [edited])
      const read = await store.read('lessons')
      assert.deepEqual(
        read.entries.map((e) => e.text),
        ['First real lesson'],
      )
      assert.deepEqual(
        read.problems.map((p) => [p.file, p.line, p.text]),
        [
          ['agents/default/memory/lessons.md', 3, 'TODO: tidy this file up'],
          ['agents/default/memory/lessons.md', 4, '- broken <!-- ts 2026 -->'],
        ],
      )
      await store.encodeLesson(lesson('Third lesson'))
      await store.rewriteAll('lessons', [lesson('Only lesson now', { ts: '2026-02-02' })])
      const text = (await rowText(handle, 'lessons')) ?? ''
      for (const garbage of ['TODO: tidy this file up', '- broken <!-- ts 2026 -->']) assert.ok(text.split('\n').includes(garbage), `kept: ${garbage}`)
      assert.deepEqual(
        (await store.recallLessons()).map((e) => e.text),
        ['Only lesson now'],
      )
    } finally {
      await cleanup()
    }
  })

  test('owners and agents keep their own rows; shared rows are every agent\'s; a project\'s rows are every agent\'s that opens it', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const open = (agent: string, extra: Partial<Parameters<typeof createPostgresEngramStore>[1]> = {}): EngramStore =>
        createPostgresEngramStore(handle, { agent, scope: 'global', clock, ...extra })
      const agentA = open('a')
      const ada = open('a', { owner: 'user:ada' })
      const agentB = open('b')
      const sharedA = open('a', { owner: 'shared' })
      const sharedB = open('b', { owner: 'shared' })
      const projectA = open('a', { scope: 'project', project: '/work/p' })
      const projectB = open('b', { scope: 'project', project: '/work/p' })
      const otherProject = open('a', { scope: 'project', project: '/work/q' })
      await agentA.encodeLesson(lesson('agent a lesson', { topic: 'a-topic' }))
      await ada.encodeLesson(lesson('ada private lesson', { topic: 'ada-topic' }))
      await agentB.encodeLesson(lesson('agent b lesson'))
      await sharedA.encodeRule({ text: 'shared rule', kind: 'always', meta: {} })
      await projectA.encodeLesson(lesson('project p lesson'))
      const texts = async (store: EngramStore) => (await store.recallLessons()).map((e) => e.text)
      assert.deepEqual(await texts(agentA), ['agent a lesson'])
      assert.deepEqual(await texts(ada), ['ada private lesson'])
      assert.deepEqual(await texts(agentB), ['agent b lesson'])
      assert.deepEqual(await agentA.listTopics(), ['a-topic'])
      assert.deepEqual(await ada.listTopics(), ['ada-topic'])
      assert.deepEqual(await agentB.listTopics(), [])
      assert.equal(await agentB.recallTopic('a-topic'), null)
      assert.deepEqual((await sharedB.recallRules()).always.map((e) => e.text), ['shared rule'])
      assert.deepEqual((await agentA.recallRules()).always, [])
      assert.deepEqual(await texts(projectB), ['project p lesson'])
      assert.deepEqual(await texts(otherProject), [])
      await handle.pool.query(`UPDATE engram_files SET text = text || 'garbage line' || E'\\n'`)
      assert.deepEqual(
        [
          (await ada.read('lessons')).problems[0]?.file,
          (await sharedB.read('rules')).problems[0]?.file,
          (await projectA.read('lessons')).problems[0]?.file,
          (await open('a', { owner: 'user:ada', scope: 'project', project: '/work/p' }).read('lessons')).problems[0]?.file,
        ],
        ['agents/a/users/ada/memory/lessons.md', 'shared/memory/rules.md', 'project:.engram/memory/lessons.md', undefined],
      )
      assert.throws(() => open('a', { owner: 'shared', scope: 'project', project: '/work/p' }), { code: 'invalid_argument' })
      assert.throws(() => open('a', { scope: 'project' }), { code: 'invalid_argument' })
      assert.throws(() => open('a', { project: '/work/p' }), { code: 'invalid_argument' })
      assert.throws(() => open(''), { code: 'invalid_argument' })
    } finally {
      await cleanup()
    }
  })

  test('a NUL in metadata or a topic name is refused; a row over the size limit is skipped, reported and never written over', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const store = createPostgresEngramStore(handle, { agent: 'default', scope: 'global', clock, maxFileBytes: 2048 })
      await assert.rejects(store.encodeLesson(lesson('tea', { topic: 'a\u0000b' })), { code: 'invalid_argument', message: /NUL/ })
      await assert.rejects(store.encodeRule({ text: 'tea', kind: 'always', meta: { note: 'x\u0000' } }), { code: 'invalid_argument' })
      await assert.rejects(store.rewriteAll('lessons', [lesson('tea', { meta: { note: 'x\u0000' } })]), { code: 'invalid_argument' })
      assert.equal((await handle.pool.query('SELECT count(*)::int AS n FROM engram_files')).rows[0]?.n, 0, 'nothing was written')

      await store.encodeLesson(lesson('a lesson', { topic: 'tea' }))
      const big = `# Lessons\n${'- a lesson that is long enough\n'.repeat(100)}`
      await handle.pool.query(`UPDATE engram_files SET text = $1 WHERE file IN ('lessons', 'topics/tea')`, [big])
      await handle.pool.query(`INSERT INTO engram_files SELECT agent, owner, scope, project, 'topics/Not A Slug', '# x', updated_at FROM engram_files WHERE file = 'lessons'`)
      assert.deepEqual(await store.recallLessons(), [])
      assert.equal(await store.recallTopic('tea'), null)
      const [problem] = (await store.read('lessons')).problems
      assert.equal(problem?.file, 'agents/default/memory/lessons.md')
      assert.match(problem?.reason ?? '', /larger than memory\.maxFileBytes \(2048\).*ENGRAM_MEMORY_MAX_FILE_BYTES/)
      assert.deepEqual(
        (await store.topicProblems()).map((p) => [p.file, p.reason.split(',')[0]]),
        [
          ['agents/default/memory/topics/Not A Slug.md', 'a topic file name that is not a topic slug (lower case'],
          ['agents/default/memory/topics/tea.md', `${Buffer.byteLength(big)} bytes`],
        ],
      )
      await assert.rejects(store.encodeLesson(lesson('one more')), { code: 'storage_unavailable', message: /lessons\.md/ })
      await assert.rejects(store.rewriteAll('lessons', []), { code: 'storage_unavailable' })
      assert.equal(await rowText(handle, 'lessons'), big)
    } finally {
      await cleanup()
    }
  })

  test('8 processes × 200 lessons at once: exactly 1,600 entries, each once; the same lessons from all 8: each once', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const store = createPostgresEngramStore(handle, { agent: 'default', scope: 'global', clock: new ManualClock('2026-03-04T10:00:00Z') })
      const workers = 8
      const perWorker = 200
      assert.deepEqual(await encodeInWorkers(url, handle, workers, perWorker, 'distinct'), Array(workers).fill(perWorker))
      const { entries, problems } = await store.read('lessons')
      assert.deepEqual(problems, [])
      assert.equal(entries.length, workers * perWorker)
      assert.equal(new Set(entries.map((e) => e.text)).size, workers * perWorker)
      for (let w = 0; w < workers; w++) {
        const topic = await store.recallTopic(`worker-${w}`)
        assert.equal(topic?.split('\n').filter((line) => line.startsWith('- ')).length, perWorker)
        // Each worker's lessons are in its own order (each write adds at the end).
        const mine = entries.filter((e) => e.text.startsWith(`worker ${w} `)).map((e) => Number(e.text.split(' ').pop()))
        assert.deepEqual(mine, [...mine].sort((a, b) => a - b))
      }

      const same = 50
      const added = await encodeInWorkers(url, handle, workers, same, 'same')
      assert.equal(
        added.reduce((sum, n) => sum + n, 0),
        same,
        `each shared lesson added once in all: ${added.join(', ')}`,
      )
      const after = (await store.read('lessons')).entries.filter((e) => e.text.startsWith('shared lesson '))
      assert.equal(after.length, same)
      assert.equal(new Set(after.map((e) => e.text)).size, same)
      assert.equal((await store.recallTopic('shared'))?.split('\n').filter((line) => line.startsWith('- ')).length, same)
    } finally {
      await cleanup()
    }
  })

  test('rewriteAll racing encodeLesson from other processes and stores loses nothing', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const open = () => createPostgresEngramStore(handle, { agent: 'default', scope: 'global', clock })
      const store = open()
      for (let i = 0; i < 20; i++) await store.encodeLesson(lesson(`seed lesson ${i}`, { ts: '2026-01-01' }))
      let passes = 0
      let seen = 0
      const compact = async (): Promise<void> => {
        // Consolidation as it runs: rewrite every lesson (here: mark it) while others encode.
        for (let pass = 0; pass < 30; pass++) {
          await open().rewriteAll('lessons', (current) => {
            seen = Math.max(seen, current.length)
            return current.map((entry) => ({ ...entry, meta: { ...entry.meta, pass: String(pass) } }))
          })
          passes++
        }
      }
      const inProcess = Promise.all(Array.from({ length: 60 }, (_, i) => open().encodeLesson(lesson(`local lesson ${i}`))))
      const [added] = await Promise.all([encodeInWorkers(url, handle, 2, 100, 'distinct', compact), inProcess])
      assert.deepEqual(added, [100, 100])
      assert.equal(passes, 30)
      const texts = (await store.read('lessons')).entries.map((e) => e.text)
      assert.equal(texts.length, 20 + 60 + 200, `nothing lost, nothing doubled (the rewrites saw up to ${seen})`)
      assert.equal(new Set(texts).size, texts.length)
      for (const prefix of ['seed lesson ', 'local lesson ', 'worker 0 lesson ', 'worker 1 lesson ']) assert.ok(texts.some((text) => text.startsWith(prefix)), prefix)
    } finally {
      await cleanup()
    }
  })
})

onPostgres('EngramStore archive rows', (url) => {
  test("a project's forgotten memory is kept in the owner's archive rows, as in the owner's tree of the home; another owner's archive is another", async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const open = (owner: 'user:ada' | 'user:bo', scope: 'global' | 'project'): EngramStore =>
        createPostgresEngramStore(handle, { agent: 'default', owner, scope, clock, ...(scope === 'project' ? { project: '/work/repo' } : {}) })
      const project = open('user:ada', 'project')
      await project.encodeLesson(lesson('The repo builds with make release', { topic: 'build' }))
      assert.equal(await project.archive?.forgetTopic('build', '2026-03-04T10-00-00-000Z'), true)
      await project.archive?.updateEntries('lessons', () => '# Forgotten lessons\n\n- x <!-- kind:lesson -->\n')
      const global = open('user:ada', 'global')
      assert.deepEqual(await global.archive?.list(), ['forgotten/project/lessons', 'forgotten/project/topics/build'])
      assert.match((await global.archive?.read('forgotten/project/topics/build')) ?? '', /make release/)
      assert.deepEqual(await project.listTopics(), [])
      assert.deepEqual(await global.listTopics(), [], 'archived rows are no topics of either scope')
      assert.deepEqual(await open('user:bo', 'global').archive?.list(), [])
      const { rows } = await handle.pool.query<{ agent: string; scope: string; project: string; file: string }>(
        `SELECT agent, scope, project, file FROM engram_files WHERE starts_with(file, 'archive/') ORDER BY file`,
      )
      assert.deepEqual(rows, [
        { agent: 'default', scope: 'global', project: '', file: 'archive/forgotten/project/lessons' },
        { agent: 'default', scope: 'global', project: '', file: 'archive/forgotten/project/topics/build' },
      ])
      assert.equal(await project.archive?.restoreTopic('build'), 'restored')
      assert.match((await project.recallTopic('build')) ?? '', /make release/)
    } finally {
      await cleanup()
    }
  })
})
