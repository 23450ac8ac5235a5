import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import type { EngramEntry } from '../../core/engram.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import type { EngramStore } from '../contracts.ts'
import { createFileEngramStore, topicSlug } from './engram-store.ts'
import { createFileLocks } from './locks.ts'
import { runChild } from './test-support/run-children.ts'

const ENCODE_LESSONS = join(import.meta.dirname, 'test-support', 'encode-lessons.ts')

function setup(): { temp: TempHome; dir: string; locksDir: string; clock: ManualClock; store: EngramStore } {
  const temp = makeTempHome()
  const dir = join(temp.home, 'agents', 'default', 'memory')
  const locksDir = join(temp.home, 'locks')
  const clock = new ManualClock('2026-03-04T10:00:00Z')
  const locks = createFileLocks({ dir: locksDir })
  const store = createFileEngramStore({ dir, scope: 'global', locks, clock, archive: { dir: join(temp.home, 'agents', 'default', 'archive'), locks } })
  return { temp, dir, locksDir, clock, store }
}

function lesson(text: string, extra: Partial<EngramEntry> = {}): EngramEntry {
  return { text, kind: 'lesson', meta: {}, ...extra }
}

describe('file EngramStore', () => {
  test('files are created lazily, with their headers', async () => {
    const { temp, dir, store } = setup()
    try {
      await store.recallRules()
      assert.throws(() => readdirSync(dir), { code: 'ENOENT' }, 'reading creates nothing')
      await store.encodeRule({ text: 'Use httpx instead of requests', kind: 'always', meta: {}, confidence: 'high', source: 'user' })
      assert.equal(
        readFileSync(join(dir, 'rules.md'), 'utf8'),
        '# Rules\n\n## Always\n- Use httpx instead of requests <!-- confidence:high source:user ts:2026-03-04 -->\n\n## Never\n\n## When\n',
      )
      await store.encodeLesson(lesson('CoinGecko free tier rate-limits at ~50 req/min', { topic: 'api-coingecko' }))
      assert.equal(readFileSync(join(dir, 'lessons.md'), 'utf8'), '# Lessons\n- CoinGecko free tier rate-limits at ~50 req/min <!-- topic:api-coingecko ts:2026-03-04 -->\n')
      assert.equal(readFileSync(join(dir, 'topics', 'api-coingecko.md'), 'utf8'), '# api-coingecko\n- CoinGecko free tier rate-limits at ~50 req/min <!-- topic:api-coingecko ts:2026-03-04 -->\n')
      await store.rewriteIdentity([{ text: 'Name: Jorge', kind: 'profile', meta: {} }])
      assert.equal(readFileSync(join(dir, 'profile.md'), 'utf8'), '# Profile\n- Name: Jorge\n')
      assert.deepEqual(readdirSync(dir).sort(), ['lessons.md', 'profile.md', 'rules.md', 'topics'], 'no temp files left behind')
    } finally {
      temp.cleanup()
    }
  })

  test('garbage lines: valid entries kept, garbage reported with line numbers and kept verbatim', async () => {
    const { temp, dir, store } = setup()
    try {
      mkdirSync(dir, { recursive: true })
      const original = [
        '# Lessons',
        '- First real lesson <!-- ts:2026-01-01 -->',
        'TODO: tidy this file up',
        '- Second real lesson <!-- topic:pandas ts:2026-01-02 -->',
        '<div>html pasted here</div>',
        '- broken <!-- ts 2026 -->',
        '',
      ].join('\n')
      writeFileSync(join(dir, 'lessons.md'), original)
      const read = await store.read('lessons')
      assert.deepEqual(
        read.entries.map((e) => e.text),
        ['First real lesson', 'Second real lesson'],
      )
      assert.deepEqual(
        read.problems.map((p) => [p.file, p.line, p.text]),
        [
          [join(dir, 'lessons.md'), 3, 'TODO: tidy this file up'],
          [join(dir, 'lessons.md'), 5, '<div>html pasted here</div>'],
          [join(dir, 'lessons.md'), 6, '- broken <!-- ts 2026 -->'],
        ],
      )
      await store.encodeLesson(lesson('Third lesson'))
      await store.rewriteAll('lessons', [lesson('Only lesson now', { ts: '2026-02-02' })])
      const text = readFileSync(join(dir, 'lessons.md'), 'utf8')
      for (const garbage of ['TODO: tidy this file up', '<div>html pasted here</div>', '- broken <!-- ts 2026 -->']) {
        assert.ok(text.split('\n').includes(garbage), `kept: ${garbage}`)
      }
      assert.deepEqual(
        (await store.recallLessons()).map((e) => e.text),
        ['Only lesson now'],
      )
      assert.equal((await store.read('lessons')).problems.length, 3)
    } finally {
      temp.cleanup()
    }
  })

  test('hand edits are seen at once, and survive the next write', async () => {
    const { temp, dir, store } = setup()
    try {
      await store.encodeRule({ text: 'Be brief', kind: 'always', meta: {} })
      const path = join(dir, 'rules.md')
      // Same size and same second: a cache keyed on mtime alone would miss this edit.
      writeFileSync(path, readFileSync(path, 'utf8').replace('Be brief', 'Be kind!').replace('## Never\n', '## Never\n- Guess facts\n'))
      const rules = await store.recallRules()
      assert.deepEqual(rules.always.map((e) => e.text), ['Be kind!'])
      assert.deepEqual(rules.never.map((e) => e.text), ['Guess facts'])
      await store.encodeRule({ text: 'Cite sources', kind: 'always', meta: {} })
      const after = await store.recallRules()
      assert.deepEqual(after.always.map((e) => e.text), ['Be kind!', 'Cite sources'])
      assert.deepEqual(after.never.map((e) => e.text), ['Guess facts'])
    } finally {
      temp.cleanup()
    }
  })

  test('a memory file rewritten in place with its times set back is read again, at equal and larger size', async () => {
    const { temp, dir, store } = setup()
    try {
      await store.encodeLesson(lesson('The deploy key rotates on Mondays'))
      const path = join(dir, 'lessons.md')
      for (const [from, to] of [
        ['Mondays', 'Fridays'],
        ['Fridays', 'Fridays and after every incident'],
      ] as const) {
        assert.equal((await store.recallLessons()).length, 1)
        const before = statSync(path)
        writeFileSync(path, readFileSync(path, 'utf8').replace(from, to))
        utimesSync(path, before.atimeMs / 1000, before.mtimeMs / 1000)
        assert.deepEqual([statSync(path).ino, statSync(path).mtimeMs], [before.ino, before.mtimeMs], 'the same file, its time set back')
        assert.deepEqual((await store.recallLessons()).map((entry) => entry.text), [`The deploy key rotates on ${to}`])
      }
    } finally {
      temp.cleanup()
    }
  })

  test('calls in flight at once are written together, each with its own honest outcome, in arrival order', async () => {
    const { temp, dir, store } = setup()
    try {
      await store.encodeRule({ text: 'Rule 0', kind: 'always', meta: {} })
      const texts = Array.from({ length: 200 }, (_, i) => `Rule ${i % 150}`)
      const inodes = new Set<number>()
      const outcomes = await Promise.all(
        texts.map(async (text, i) => {
          const outcome = await store.encodeRule({ text, kind: i % 2 ? 'never' : 'always', meta: {} })
          inodes.add(statSync(join(dir, 'rules.md')).ino)
          return outcome.kind
        }),
      )
      // Rule 0 was there; of the others, the first of each text (kind included) is added.
      const seen = new Set<string>(['always:Rule 0'])
      const expected = texts.map((text, i) => {
        const key = `${i % 2 ? 'never' : 'always'}:${text}`
        if (seen.has(key)) return 'duplicate'
        seen.add(key)
        return 'added'
      })
      assert.deepEqual(outcomes, expected)
      const rules = await store.recallRules()
      assert.equal(rules.always.length + rules.never.length, seen.size)
      assert.deepEqual(
        rules.always.map((e) => e.text),
        [...new Set(texts.filter((_, i) => i % 2 === 0))],
        'appended in arrival order',
      )
      assert.ok(inodes.size <= 3, `200 calls rewrote rules.md ${inodes.size} times`)
    } finally {
      temp.cleanup()
    }
  })

  test('topic slugs are sanitized to [a-z0-9-]', () => {
    assert.equal(topicSlug('API: CoinGecko / v3'), 'api-coingecko-v3')
    assert.equal(topicSlug('../../etc/passwd'), 'etc-passwd')
    assert.equal(topicSlug('Café Crème'), 'cafe-creme')
    assert.equal(topicSlug('!!!'), '')
  })

  test('8 processes × 200 lessons at once: exactly 1,600 entries, each once', async () => {
    const { temp, dir, locksDir, store } = setup()
    try {
      const workers = 8
      const perWorker = 200
      const results = await Promise.all(Array.from({ length: workers }, (_, w) => runChild(ENCODE_LESSONS, [dir, locksDir, String(w), String(perWorker)])))
      assert.deepEqual(
        results.map((r) => r.stdout.trim()),
        Array(workers).fill(String(perWorker)),
      )
      const { entries, problems } = await store.read('lessons')
      assert.deepEqual(problems, [])
      assert.equal(entries.length, workers * perWorker)
      assert.equal(new Set(entries.map((e) => e.text)).size, workers * perWorker)
      for (let w = 0; w < workers; w++) {
        const topic = await store.recallTopic(`worker-${w}`)
        assert.equal(topic?.split('\n').filter((line) => line.startsWith('- ')).length, perWorker)
      }
      // Each worker's lessons are in its own order (appends go to the end).
      const mine = entries.filter((e) => e.text.startsWith('worker 3 ')).map((e) => Number(e.text.split(' ').pop()))
      assert.deepEqual(mine, [...mine].sort((a, b) => a - b))
    } finally {
      temp.cleanup()
    }
  })
})

describe('file EngramStore: files it cannot read (decision 0025)', () => {
  test('a folder, a pipe or a link out at a memory file name is skipped and reported, and never written over', async () => {
    const { temp, dir, store } = setup()
    try {
      mkdirSync(join(dir, 'topics'), { recursive: true })
      mkdirSync(join(dir, 'rules.md'))
      execFileSync('mkfifo', [join(dir, 'lessons.md')])
      writeFileSync(join(temp.home, 'secret.md'), '- outside secret\n')
      symlinkSync(join(temp.home, 'secret.md'), join(dir, 'profile.md'))
      mkdirSync(join(dir, 'topics', 'tea.md'))
      assert.deepEqual((await store.read('rules')).problems.map((p) => [p.line, p.reason]), [[0, 'a folder, not a file']])
      assert.deepEqual((await store.read('lessons')).problems.map((p) => p.reason), ['a named pipe, not a file'])
      assert.deepEqual(await store.recallIdentity(), [], 'the outside file is never read')
      assert.deepEqual((await store.read('profile')).problems.map((p) => p.reason), ['a symbolic link that leads outside its memory folder'])
      assert.deepEqual((await store.topicProblems()).map((p) => p.reason), ['a folder, not a file'])
      assert.equal(await store.recallTopic('tea'), null)
      await assert.rejects(store.encodeRule({ text: 'Use httpx', kind: 'always', meta: {} }), { code: 'storage_unavailable', message: /rules\.md: it is a folder, not a file/ })
      await assert.rejects(store.encodeLesson(lesson('Tea at 80°C')), { code: 'storage_unavailable' })
      await assert.rejects(store.rewriteIdentity([{ text: 'Name: Ada', kind: 'profile', meta: {} }]), { code: 'storage_unavailable' })
      assert.equal(readFileSync(join(temp.home, 'secret.md'), 'utf8'), '- outside secret\n', 'nothing written through the link')
    } finally {
      temp.cleanup()
    }
  })

  test('a file over the size limit is neither read nor rewritten', async () => {
    const temp = makeTempHome()
    try {
      const dir = join(temp.home, 'memory')
      const store = createFileEngramStore({ dir, scope: 'global', locks: createFileLocks({ dir: join(temp.home, 'locks') }), clock: new ManualClock('2026-03-04T10:00:00Z'), maxFileBytes: 2048 })
      mkdirSync(dir, { recursive: true })
      const big = `# Lessons\n${'- a lesson that is long enough\n'.repeat(100)}`
      writeFileSync(join(dir, 'lessons.md'), big)
      assert.deepEqual(await store.recallLessons(), [])
      assert.match((await store.read('lessons')).problems[0]?.reason ?? '', /larger than memory\.maxFileBytes \(2048\).*ENGRAM_MEMORY_MAX_FILE_BYTES/)
      await assert.rejects(store.encodeLesson(lesson('one more')), { code: 'storage_unavailable' })
      assert.equal(readFileSync(join(dir, 'lessons.md'), 'utf8'), big)
    } finally {
      temp.cleanup()
    }
  })

  test('bytes that are not UTF-8 and bare carriage returns survive a rewrite byte for byte', async () => {
    const { temp, dir, store } = setup()
    try {
      mkdirSync(dir, { recursive: true })
      const latin1 = Buffer.from('- caf\xe9 cr\xe8me\n', 'latin1')
      writeFileSync(join(dir, 'rules.md'), Buffer.concat([Buffer.from('# Rules\n\n## Always\n- Use httpx\n'), latin1, Buffer.from('\n## Never\n- Use requests\n')]))
      assert.deepEqual((await store.read('rules')).problems.map((p) => p.reason), ['holds bytes that are not UTF-8 text'])
      await store.encodeRule({ text: 'Pin versions', kind: 'always', meta: {} })
      const after = readFileSync(join(dir, 'rules.md'))
      assert.ok(after.includes(latin1), 'the Latin-1 line is still there, byte for byte')
      assert.deepEqual(
        Object.values(await store.recallRules()).flat().map((e) => e.text),
        ['Use httpx', 'Pin versions', 'Use requests'],
      )
      writeFileSync(join(dir, 'lessons.md'), '# Lessons\r- Tea at 80°C\r')
      await store.encodeLesson(lesson('Coffee at 92°C'))
      assert.match(readFileSync(join(dir, 'lessons.md'), 'utf8'), /^# Lessons\r- Tea at 80°C\r- Coffee at 92°C <!-- ts:2026-03-04 -->\r$/)
    } finally {
      temp.cleanup()
    }
  })
})
