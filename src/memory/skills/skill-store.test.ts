import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { EngramError } from '../../core/errors.ts'
import { createFileLocks } from '../../storage/files/locks.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { compactSkillList, formatSkillProcedure } from './skill-prompt.ts'
import { createSkillStore } from './skill-store.ts'

function setup(t: { after(fn: () => void): void }) {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-04-11T10:00:00Z')
  const dir = join(tmp.home, 'agents', 'default', 'skills')
  const store = createSkillStore({ dir, clock, locks: createFileLocks({ dir: join(tmp.home, '.locks') }) })
  return { tmp, clock, dir, store }
}

const CSV = {
  label: 'csv_summary',
  name: 'CSV Summary',
  whenToUse: 'User asks to explore, summarize, or describe a CSV file.',
  declarative: '1. Load the file with pandas.\n2. Infer the schema.\n3. Print describe() and plot distributions.',
}

test('save writes the seed directory format and load reads it back', async (t) => {
  const { store, dir } = setup(t)
  const saved = await store.save({ ...CSV, provenance: { source: 'user' } })
  const folder = join(dir, 'csv_summary')
  assert.deepEqual(readdirSync(folder).sort(), ['declarative.md', 'meta.json', 'stats.json'])
  const meta = JSON.parse(readFileSync(join(folder, 'meta.json'), 'utf8'))
  assert.equal(meta.label, 'csv_summary')
  assert.equal(meta.name, 'CSV Summary')
  assert.equal(meta.when_to_use, CSV.whenToUse)
  assert.deepEqual(meta.provenance, { source: 'user' })
  assert.equal(meta.created_at, '2026-04-11T10:00:00.000Z')
  assert.equal(meta.has_declarative, true)
  assert.equal(meta.has_chunks, false)
  assert.equal(meta.has_code, false)
  assert.deepEqual(JSON.parse(readFileSync(join(folder, 'stats.json'), 'utf8')), {
    stage_1: { recommended: 0, used: 0 },
    stage_2: { recommended: 0, used: 0 },
    stage_3: { recommended: 0, used: 0 },
  })
  assert.equal(readFileSync(join(folder, 'declarative.md'), 'utf8'), `${CSV.declarative}\n`)
  const loaded = await store.load('csv_summary')
  assert.deepEqual(loaded, saved)
})

test('stages 2 and 3 are stored and flagged', async (t) => {
  const { store, dir } = setup(t)
  const skill = await store.save({ ...CSV, chunks: '- recipe: quick look', code: { '__init__.py': 'def load(): pass\n', 'io/read.py': 'x = 1\n' }, requirements: 'pandas\n' })
  assert.equal(skill.meta.has_chunks, true)
  assert.equal(skill.meta.has_code, true)
  assert.equal(skill.meta.has_requirements, true)
  assert.deepEqual(skill.codeFiles, ['__init__.py', 'io/read.py'])
  assert.equal(readFileSync(join(dir, 'csv_summary', 'code', 'io', 'read.py'), 'utf8'), 'x = 1\n')
  await assert.rejects(store.save({ ...CSV, code: { '../escape.py': '' } }), (e) => EngramError.is(e) && e.code === 'invalid_argument')
  const text = formatSkillProcedure(skill)
  assert.match(text, /## Recipes\n- recipe: quick look/)
  assert.match(text, /- io\/read\.py/)
})

test('saving again never wipes counters, creation time or unknown meta keys', async (t) => {
  const { store, dir, clock } = setup(t)
  await store.save(CSV)
  await store.incrementRecommended('csv_summary')
  await store.incrementRecommended('csv_summary')
  await store.incrementUsed('csv_summary')
  const metaPath = join(dir, 'csv_summary', 'meta.json')
  writeFileSync(metaPath, JSON.stringify({ ...JSON.parse(readFileSync(metaPath, 'utf8')), anton_version: '2.1' }))
  clock.advanceDays(3)
  const again = await store.save({ ...CSV, declarative: '1. A better procedure.' })
  assert.deepEqual(again.stats.stage_1, { recommended: 2, used: 1 })
  assert.equal(again.meta.created_at, '2026-04-11T10:00:00.000Z')
  assert.equal(again.meta.updated_at, '2026-04-14T10:00:00.000Z')
  assert.equal(again.meta.anton_version, '2.1')
  assert.equal(again.declarative, '1. A better procedure.\n')
})

test('concurrent counter bumps are all counted', async (t) => {
  const { store } = setup(t)
  await store.save(CSV)
  await Promise.all(Array.from({ length: 15 }, () => store.incrementRecommended('csv_summary')))
  assert.equal((await store.load('csv_summary'))?.stats.stage_1.recommended, 15)
})

test('malformed skill folders are reported, not fatal, and left untouched', async (t) => {
  const { store, dir } = setup(t)
  await store.save(CSV)
  mkdirSync(join(dir, 'no_meta'), { recursive: true })
  writeFileSync(join(dir, 'no_meta', 'declarative.md'), 'steps')
  mkdirSync(join(dir, 'bad_json'))
  writeFileSync(join(dir, 'bad_json', 'meta.json'), '{ not json')
  mkdirSync(join(dir, 'no_cue'))
  writeFileSync(join(dir, 'no_cue', 'meta.json'), JSON.stringify({ label: 'no_cue', name: 'x' }))
  writeFileSync(join(dir, 'no_cue', 'declarative.md'), 'steps')
  mkdirSync(join(dir, 'no_steps'))
  writeFileSync(join(dir, 'no_steps', 'meta.json'), JSON.stringify({ when_to_use: 'always' }))
  const { skills, problems } = await store.list()
  assert.deepEqual(skills.map((s) => s.label), ['csv_summary'])
  assert.deepEqual(problems.map((p) => p.label).sort(), ['bad_json', 'no_cue', 'no_meta', 'no_steps'])
  assert.match(problems.find((p) => p.label === 'bad_json')?.reason ?? '', /not valid JSON/)
  assert.equal(readFileSync(join(dir, 'bad_json', 'meta.json'), 'utf8'), '{ not json')
  assert.equal(await store.load('bad_json'), null)
  assert.deepEqual(await store.listSummaries(), [{ label: 'csv_summary', name: 'CSV Summary', when_to_use: CSV.whenToUse }])
})

test('a broken stats.json is preserved beside fresh counters on the next bump', async (t) => {
  const { store, dir } = setup(t)
  await store.save(CSV)
  writeFileSync(join(dir, 'csv_summary', 'stats.json'), 'garbage')
  const listing = await store.list()
  assert.equal(listing.skills.length, 1)
  assert.match(listing.problems[0]?.reason ?? '', /stats\.json/)
  const stats = await store.incrementRecommended('csv_summary')
  assert.equal(stats.stage_1.recommended, 1)
  const broken = readdirSync(join(dir, 'csv_summary')).find((name) => name.startsWith('stats.json.broken-'))
  assert.ok(broken)
  assert.equal(readFileSync(join(dir, 'csv_summary', broken), 'utf8'), 'garbage')
})

test('an Anton-written skill folder round-trips: unknown keys and counters survive', async (t) => {
  const { store, dir } = setup(t)
  const folder = join(dir, 'csv_summary')
  mkdirSync(folder, { recursive: true })
  const meta = {
    label: 'csv_summary',
    name: 'CSV Summary',
    description: 'Summarize a CSV end-to-end',
    when_to_use: 'User asks to explore, summarize, or describe a CSV file.',
    provenance: { source: 'skill_save', session: 'abc' },
    created_at: '2026-04-01T12:00:00Z',
    has_declarative: true,
    has_chunks: false,
    has_code: false,
  }
  const stats = { stage_1: { recommended: 7, used: 3 }, stage_2: { recommended: 0, used: 0 }, stage_3: { recommended: 0, used: 0 }, last_recalled: '2026-04-10' }
  writeFileSync(join(folder, 'meta.json'), JSON.stringify(meta, null, 2))
  writeFileSync(join(folder, 'declarative.md'), '1. Load.\n')
  writeFileSync(join(folder, 'stats.json'), JSON.stringify(stats, null, 2))
  const skill = await store.load('csv_summary')
  assert.equal(skill?.meta.description, 'Summarize a CSV end-to-end')
  assert.deepEqual(skill?.stats, stats)
  const after = await store.incrementRecommended('csv_summary')
  assert.deepEqual(after, { ...stats, stage_1: { recommended: 8, used: 3 } })
  assert.deepEqual(JSON.parse(readFileSync(join(folder, 'stats.json'), 'utf8')), after)
})

test('delete moves the folder to the archive; closestMatch and makeUniqueLabel see the library', async (t) => {
  const { store, tmp, dir } = setup(t)
  await store.save(CSV)
  await store.save({ ...CSV, label: 'deploy_staging', name: 'Deploy', whenToUse: 'Deploying to staging.' })
  assert.deepEqual(await store.closestMatch('csv_sumary'), { label: 'csv_summary', ratio: 20 / 21 })
  assert.equal(await store.makeUniqueLabel('CSV Summary'), 'csv_summary_2')
  const archived = await store.delete('csv_summary')
  assert.ok(!existsSync(join(dir, 'csv_summary')))
  assert.ok(archived.startsWith(join(tmp.home, 'agents', 'default', 'archive', 'skills', 'csv_summary.')))
  assert.equal(readFileSync(join(archived, 'declarative.md'), 'utf8'), `${CSV.declarative}\n`)
  await assert.rejects(store.delete('csv_summary'), (e) => EngramError.is(e) && e.code === 'not_found' && /deploy_staging/.test(e.fix ?? ''))
})

test('compactSkillList: one line per skill within ~50 tokens, empty without skills', () => {
  assert.equal(compactSkillList([]), '')
  const text = compactSkillList([
    { label: 'csv_summary', name: 'CSV Summary', when_to_use: 'User asks to\nexplore a CSV file.' },
    { label: 'long', name: 'Long', when_to_use: 'word '.repeat(200) },
  ])
  const lines = text.split('\n')
  assert.equal(lines[0], '## Procedural memory')
  assert.equal(lines[2], '- csv_summary — User asks to explore a CSV file.')
  assert.ok((lines[3] ?? '').endsWith('…'))
  assert.ok((lines[3] ?? '').length < 300)
})
