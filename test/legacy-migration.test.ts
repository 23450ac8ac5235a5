/**
 * Legacy migration on open (decision 0050; the seed's `reconsolidate()`): a home in the old layout —
 * `context/*.md` and `learnings/*.md` beside the agent's memory, or in the open project's
 * `.engram/` — is migrated when `createMind` opens it in a fresh process, not only by `engram import
 * anton`: each file becomes a topic, each line a lesson, the old files stay. Once: a second open
 * writes nothing and a lesson forgotten since is not brought back; a migration that died half way
 * (recorded as started) is finished by the next open without a lesson written twice. Reported in
 * the agent's activity; both users' sessions find the agent's migrated lessons.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createMind } from '../src/mind.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { call } from './support/tool-calls.ts'

const run = promisify(execFile)
const OPENER = fileURLToPath(new URL('./support/open-mind.ts', import.meta.url))

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

async function openInFreshProcess(home: string, project?: string, storage: Record<string, string> = {}): Promise<{ warnings: string[] }> {
  const { stdout } = await run(process.execPath, [OPENER, home, ...(project ? [project] : [])], { env: { ...process.env, HOME: home, ENGRAM_HOME: home, ...storage } })
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { warnings: string[] }
}

const count = (text: string, fact: string): number => text.split('\n').filter((line) => line.includes(fact)).length

test('a home in the old layout is migrated when a fresh process opens it: once, losslessly, redone after a crash', async (t) => {
  const temp = makeTempHome('engram-legacy-')
  t.after(temp.cleanup)
  const agentDir = join(temp.home, 'agents', 'default')
  const CONTEXT = join(agentDir, 'context', 'project-overview.md')
  const contextText = '# Overview\n- The project ingests crypto prices hourly\n- ok\n- Reports go to the #data channel\n'
  write(CONTEXT, contextText)
  write(join(agentDir, 'learnings', 'a1.md'), '- Retry 429s with exponential backoff\n- The vendor API returns UTC timestamps\n')
  write(join(agentDir, 'learnings', 'index.json'), '{"a1": {"topic": "vendor-api"}}\n')
  const projectContext = join(temp.project, '.engram', 'context', 'build.md')
  write(projectContext, '- The build needs Node 24 and pnpm 9\n')
  // The seed's own project folder.
  write(join(temp.project, '.anton', 'learnings', 'ci.md'), '- CI caches the pnpm store between runs\n')

  const opened = await openInFreshProcess(temp.home, temp.project)
  assert.deepEqual(opened.warnings, [])
  const lessons = readFileSync(join(agentDir, 'memory', 'lessons.md'), 'utf8')
  for (const fact of ['The project ingests crypto prices hourly', 'Reports go to the #data channel', 'Retry 429s with exponential backoff', 'The vendor API returns UTC timestamps']) {
    assert.equal(count(lessons, fact), 1, `${fact} in lessons.md once`)
  }
  assert.doesNotMatch(lessons, /- ok\b/, 'fragments under 6 characters are skipped, as the seed does')
  assert.match(readFileSync(join(agentDir, 'memory', 'topics', 'vendor-api.md'), 'utf8'), /Retry 429s/, 'learnings get their topic from index.json')
  const projectLessons = readFileSync(join(temp.project, '.engram', 'memory', 'lessons.md'), 'utf8')
  assert.match(projectLessons, /The build needs Node 24 and pnpm 9/, "the project's old folder goes to project memory")
  assert.match(projectLessons, /CI caches the pnpm store between runs/, "and so does the project's .anton/")
  assert.equal(readFileSync(CONTEXT, 'utf8'), contextText, 'the old files are kept as they were')
  assert.ok(existsSync(projectContext))

  // Reported where the agent and a person look: the agent's activity log names what came from where.
  const mind = await createMind({ home: temp.home, project: temp.project, env: { ...temp.env, ENGRAM_EMBED_PROVIDER: 'none' }, ignoreConfigFile: true })
  const reports = (await mind.backend.activity.read({ types: ['memory_write'] })).filter((event) => event.meta?.action === 'legacy-migration')
  assert.equal(reports.length, 3, JSON.stringify(reports))
  assert.match(reports.map((event) => event.summary).join('\n'), /legacy migration: 4 lessons from .*context.*learnings into global memory/)
  // …and `engram status` (mind.status) lists each folder migrated.
  assert.deepEqual(
    Object.fromEntries(Object.entries((await mind.status()).legacyMigration).map(([root, record]) => [root, [record.status, record.lessons]])),
    { [agentDir]: ['done', 4], [join(temp.project, '.engram')]: ['done', 1], [join(temp.project, '.anton')]: ['done', 1] },
  )
  // Both users' sessions find the agent's migrated lessons.
  for (const user of ['ada', 'bob']) {
    const turn = await mind.session(`${user}-1`, { user }).begin('How should I handle 429 responses from the vendor?')
    assert.match((await call(turn.tools, 'search_memory', { query: 'retry 429 exponential backoff' })).text, /Retry 429s with exponential backoff/)
  }
  // A migrated lesson the agent forgets is not brought back by a later open.
  await mind.forget('Reports go to the #data channel')
  await mind.close()

  await openInFreshProcess(temp.home, temp.project)
  const again = readFileSync(join(agentDir, 'memory', 'lessons.md'), 'utf8')
  assert.equal(count(again, 'Reports go to the #data channel'), 0, 'a forgotten lesson stays forgotten')
  assert.equal(count(again, 'Retry 429s with exponential backoff'), 1, 'nothing written twice')

  // A migration that died half way: the record says started, part of the lessons are in. The next open finishes it.
  const recordPath = join(agentDir, 'state', 'legacy-migration.json')
  const record = JSON.parse(readFileSync(recordPath, 'utf8')) as Record<string, { status: string }>
  assert.equal(record[agentDir]?.status, 'done')
  write(join(agentDir, 'learnings', 'b2.md'), '- The vendor sandbox resets every Sunday night\n')
  writeFileSync(recordPath, JSON.stringify({ ...record, [agentDir]: { status: 'started', at: new Date().toISOString() } }))
  await openInFreshProcess(temp.home, temp.project)
  const finished = readFileSync(join(agentDir, 'memory', 'lessons.md'), 'utf8')
  assert.equal(count(finished, 'The vendor sandbox resets every Sunday night'), 1)
  assert.equal(count(finished, 'Retry 429s with exponential backoff'), 1, 'what the first attempt wrote is not written again')
  assert.equal((JSON.parse(readFileSync(recordPath, 'utf8')) as Record<string, { status: string }>)[agentDir]?.status, 'done')
})

onPostgres('legacy migration on open', (url) => {
  test('on PostgreSQL the old folders of the home go into the rows, once', async (t) => {
    const temp = makeTempHome('engram-legacy-pg-')
    t.after(temp.cleanup)
    const storage = { ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: freshSchema() }
    const agentDir = join(temp.home, 'agents', 'default')
    write(join(agentDir, 'context', 'project-overview.md'), '- The project ingests crypto prices hourly\n')
    write(join(agentDir, 'learnings', 'a1.md'), '- Retry 429s with exponential backoff\n')
    assert.deepEqual((await openInFreshProcess(temp.home, undefined, storage)).warnings, [])
    await openInFreshProcess(temp.home, undefined, storage)
    const mind = await createMind({ home: temp.home, env: { ...temp.env, ...storage, ENGRAM_EMBED_PROVIDER: 'none' }, ignoreConfigFile: true })
    t.after(() => mind.close())
    assert.equal(mind.backend.name, 'postgres')
    const lessons = (await mind.memory.global.read('lessons')).entries.map((entry) => entry.text)
    assert.equal(lessons.filter((text) => text === 'Retry 429s with exponential backoff').length, 1, 'migrated once over two opens')
    assert.ok(lessons.includes('The project ingests crypto prices hourly'))
    const turn = await mind.session('ada-1', { user: 'ada' }).begin('How do I handle 429s?')
    assert.match((await call(turn.tools, 'search_memory', { query: 'retry 429 exponential backoff' })).text, /Retry 429s/)
  })
})
