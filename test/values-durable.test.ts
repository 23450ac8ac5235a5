// @slow: opens minds in child processes and runs on PostgreSQL
/**
 * A changed value recorded durably (decision 0087), through the agent's path: `createMind` with
 * `memory.extractFromTurns` on, a new Session per turn, two users. Ada says which editor she uses
 * and where she lives, Bob which editor he uses; weeks later Ada says she switched editor and moved.
 * After `maintain()` her later facts are knowledge documents that supersede the earlier ones (decision
 * 0033's pair); a new process reopening the home finds the new value first in search_memory and in
 * the next primed context, the old one with its dates and "superseded by", and both in
 * `mind.history`. Bob's facts are untouched. On the embedded home and on PostgreSQL.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind } from '../src/mind.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const DAY = 86_400_000
const QUESTION = 'Which editor do I use for editing code?'

/** What a new process sees: Ada's search_memory and next primed context, and the history of each of her value documents. */
const READER = `
import { createMind } from ${JSON.stringify(resolve('src/mind.ts'))}
import { ManualClock } from ${JSON.stringify(resolve('src/core/clock.ts'))}
const mind = await createMind({ home: process.env.ENGRAM_HOME, env: process.env, ignoreConfigFile: true, clock: new ManualClock('2026-05-20T09:00:00Z') })
const turn = await mind.session('reader', { user: 'ada' }).begin(${JSON.stringify(QUESTION)})
const search = turn.tools.find((tool) => tool.name === 'search_memory')
const found = await search.execute({ query: ${JSON.stringify(QUESTION)} })
const where = await search.execute({ query: 'Where do I live? Which city?' })
const histories = {}
for (const path of JSON.parse(process.env.VALUE_DOCS)) histories[path] = await mind.history(path, { user: 'ada' })
await mind.close()
process.stdout.write(JSON.stringify({ system: turn.system, found: found.text, where: where.text, histories }))
`

async function scenario(t: test.TestContext, env: NodeJS.ProcessEnv, home: string, dir: string): Promise<void> {
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home, env, ignoreConfigFile: true, clock, settings: { 'memory.extractFromTurns': true, 'jobs.eager': false } })
  let open = true
  t.after(async () => {
    if (open) await mind.close()
  })
  const say = async (user: string, id: string, text: string): Promise<void> => {
    const session = mind.session(id, { user })
    const turn = await session.begin(text)
    await session.end(turn, 'Noted, thanks.')
    await mind.maintain()
  }
  await say('ada', 'ada-1', 'I use VS Code for editing. I live in Lisbon.')
  await say('bob', 'bob-1', 'I use Emacs for editing.')
  clock.advance(30 * DAY)
  await say('bob', 'bob-2', 'I like long walks on the beach.')
  clock.advance(30 * DAY)
  await say('ada', 'ada-2', 'I now use Neovim for editing. I moved to Berlin last month.')

  const internals = mind as unknown as { backend: import('../src/storage/contracts.ts').Backend }
  const ada = internals.backend.owned('user:ada').documents
  const docs = new Map<string, import('../src/core/memory-doc.ts').MemoryDoc>()
  for (const ref of await ada.list('knowledge')) {
    const doc = await ada.read('knowledge', ref.slug)
    if (doc) docs.set(ref.slug, doc)
  }
  const bySupersedes = [...docs.values()].filter((doc) => typeof doc.frontmatter.supersedes === 'string')
  assert.equal(bySupersedes.length, 2, [...docs.keys()].join(', '))
  for (const newer of bySupersedes) {
    const old = docs.get(String(newer.frontmatter.supersedes))
    assert.ok(old, `${newer.slug} supersedes a document that exists`)
    assert.equal(old.frontmatter.superseded_by, newer.slug)
    assert.equal(newer.frontmatter.valid_from, '2026-05-01T09:00:00.000Z', 'the new value holds from when it was said')
    assert.equal(old.frontmatter.valid_until, '2026-05-01T09:00:00.000Z')
  }
  const editor = bySupersedes.find((doc) => doc.body.includes('Neovim'))
  assert.ok(editor, 'the editor change is recorded')
  const oldEditor = docs.get(String(editor.frontmatter.supersedes))
  assert.match(oldEditor?.body ?? '', /VS Code/)
  assert.equal(oldEditor?.frontmatter.valid_from, '2026-03-02T00:00:00.000Z', 'the old value holds from the day it was recorded')
  const place = bySupersedes.find((doc) => doc.body.includes('Berlin'))
  assert.match(docs.get(String(place?.frontmatter.supersedes))?.body ?? '', /Lisbon/)
  // Bob said a value too, and Ada's change never reaches his tree.
  assert.deepEqual(await internals.backend.owned('user:bob').documents.list('knowledge'), [])
  const bobLessons = (await internals.backend.owned('user:bob').engrams('global')?.read('lessons'))?.entries.map((entry) => entry.text) ?? []
  assert.ok(bobLessons.some((text) => text.includes('Emacs')), bobLessons.join('\n'))
  // The lessons stay what was said (mind.memories lists them).
  const adaLessons = (await mind.memories.getAll({ user: 'ada' })).memories.map((memory) => memory.text)
  assert.ok(adaLessons.some((text) => text.includes('VS Code')) && adaLessons.some((text) => text.includes('Neovim')), adaLessons.join('\n'))
  await mind.close()
  open = false

  const script = join(dir, 'reader.ts')
  writeFileSync(script, READER)
  const paths = [...docs.keys()].map((slug) => `knowledge/${slug}.md`)
  const seen = JSON.parse(execFileSync(process.execPath, [script], { env: { ...env, ENGRAM_HOME: home, VALUE_DOCS: JSON.stringify(paths) }, encoding: 'utf8' })) as {
    system: string
    found: string
    where: string
    histories: Record<string, { supersedes?: Array<{ path: string; validFrom?: string; validUntil?: string }>; supersededBy?: Array<{ path: string }> }>
  }
  const lines = seen.found.split('\n')
  const first = (needle: string): number => lines.findIndex((line) => line.includes(needle))
  assert.ok(first('Neovim') >= 0 && first('Neovim') < first('VS Code'), seen.found)
  assert.match(seen.found, /VS Code[^\n]*\(superseded by users\/ada\/knowledge\/[^\n]+ on 2026-05-01; valid 2026-03-02 – 2026-05-01\)/, seen.found)
  assert.doesNotMatch(seen.found, /Emacs/, "Bob's value is not in Ada's search")
  // The messages themselves are ranked by stage 5b (decision 0078); the recorded values come newest first.
  const recorded = seen.where.split('\n').filter((line) => line.includes('[knowledge '))
  const firstWhere = (needle: string): number => recorded.findIndex((line) => line.includes(needle))
  assert.ok(firstWhere('Berlin') >= 0 && firstWhere('Berlin') < firstWhere('Lisbon'), seen.where)
  assert.match(seen.where, /Lisbon[^\n]*\(superseded by users\/ada\/knowledge\/[^\n]+ on 2026-05-01/, seen.where)
  // The next primed context: the new value first, the old one with its dates.
  assert.ok(seen.system.indexOf('Neovim') >= 0 && seen.system.indexOf('Neovim') < seen.system.indexOf('VS Code'), seen.system)
  assert.match(seen.system, /VS Code[^\n]*superseded by[^\n]*2026-05-01/, seen.system)
  // History shows both versions, from either end.
  const newerPath = `knowledge/${editor.slug}.md`
  const olderPath = `knowledge/${oldEditor?.slug}.md`
  assert.equal(seen.histories[newerPath]?.supersedes?.[0]?.path, `users/ada/${olderPath}`)
  assert.equal(seen.histories[newerPath]?.supersedes?.[0]?.validUntil, '2026-05-01T09:00:00.000Z')
  assert.equal(seen.histories[olderPath]?.supersededBy?.[0]?.path, `users/ada/${newerPath}`)
}

test('a changed value is recorded as superseding the old one, and a new process ranks it first (embedded home)', async (t) => {
  const temp = makeTempHome('engram-values-durable-')
  t.after(temp.cleanup)
  await scenario(t, temp.env, temp.home, join(temp.home, '..'))
})

onPostgres('a changed value recorded durably', (url) => {
  test('a changed value is recorded as superseding the old one, and a new process ranks it first (PostgreSQL)', async (t) => {
    const temp = makeTempHome('engram-values-durable-pg-')
    const schema = freshSchema()
    t.after(async () => {
      await dropSchema(url, schema)
      temp.cleanup()
    })
    await scenario(t, { ...temp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema }, temp.home, join(temp.home, '..'))
  })
})
