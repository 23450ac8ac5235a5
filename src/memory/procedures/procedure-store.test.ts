import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { EngramError } from '../../core/errors.ts'
import { parseFrontmatter } from '../../core/frontmatter.ts'
import { createFileDocumentStore } from '../../storage/files/document-store.ts'
import { createFileLocks } from '../../storage/files/locks.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { createToolDispatcher } from '../../tools/dispatcher.ts'
import { createReportProcedureOutcomeTool } from '../../tools/report-procedure-outcome-tool.ts'
import { createProcedureStore, procedureConfidence } from './procedure-store.ts'

// The seed's procedures/ frontmatter example, verbatim.
const SEED_PROCEDURE = `---
description: 手順の説明
confidence: 0.5
success_count: 0
failure_count: 0
version: 1
created_at: "2026-02-18T03:00:00+09:00"
updated_at: "2026-02-18T03:00:00+09:00"
auto_distilled: true
protected: false
---
# Deploy to staging

1. Build the image.
2. Push it.
`

function setup(t: { after(fn: () => void): void }) {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-04-11T10:00:00Z')
  const locks = createFileLocks({ dir: join(tmp.home, '.locks') })
  const documents = createFileDocumentStore({ home: tmp.home, agent: 'default', clock, locks })
  const dir = join(tmp.home, 'agents', 'default', 'procedures')
  return { tmp, clock, locks, documents, dir, store: createProcedureStore({ documents, locks, clock }) }
}

test('confidence = successes / max(1, successes + failures)', () => {
  assert.equal(procedureConfidence(0, 0), 0)
  assert.equal(procedureConfidence(3, 1), 0.75)
  assert.equal(procedureConfidence(0, 2), 0)
})

test("the seed's procedure file is read as it is and outcomes rewrite it atomically, versioned", async (t) => {
  const { store, dir, tmp, clock } = setup(t)
  const { mkdirSync } = await import('node:fs')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'deploy.md'), SEED_PROCEDURE)
  const before = await store.get('deploy')
  assert.equal(before?.description, '手順の説明')
  assert.equal(before?.confidence, 0.5)
  assert.equal(before?.version, 1)

  const first = await store.reportOutcome('deploy', true, 'worked first time')
  assert.deepEqual({ s: first.successCount, f: first.failureCount, c: first.confidence }, { s: 1, f: 0, c: 1 })
  clock.advance(60_000)
  await store.reportOutcome('deploy', false)
  const third = await store.reportOutcome('deploy', true)
  assert.equal(third.confidence, 2 / 3)

  const parsed = parseFrontmatter(readFileSync(join(dir, 'deploy.md'), 'utf8'))
  assert.equal(parsed.frontmatter.success_count, 2)
  assert.equal(parsed.frontmatter.failure_count, 1)
  assert.equal(parsed.frontmatter.confidence, 2 / 3)
  assert.equal(parsed.frontmatter.created_at, '2026-02-18T03:00:00+09:00', 'the original timestamp string survives')
  assert.equal(parsed.frontmatter.updated_at, '2026-04-11T10:01:00.000Z')
  assert.equal(parsed.frontmatter.auto_distilled, true)
  assert.equal(parsed.frontmatter.protected, false)
  assert.equal(parsed.body, '# Deploy to staging\n\n1. Build the image.\n2. Push it.\n')
  const versions = readdirSync(join(tmp.home, 'agents', 'default', 'archive', 'versions', 'procedure'))
  assert.equal(versions.length, 3, 'every rewrite archived the previous version')
  const oldest = versions.sort()[0] ?? ''
  assert.equal(readFileSync(join(tmp.home, 'agents', 'default', 'archive', 'versions', 'procedure', oldest), 'utf8'), SEED_PROCEDURE)
})

test('concurrent reports are all counted', async (t) => {
  const { store } = setup(t)
  await store.create({ slug: 'backup', description: 'Back up the database', body: '1. Dump.\n' })
  await Promise.all(Array.from({ length: 8 }, (_, i) => store.reportOutcome('backup', i % 4 !== 0)))
  const after = await store.get('backup')
  assert.equal(after?.successCount, 6)
  assert.equal(after?.failureCount, 2)
  assert.equal(after?.confidence, 0.75)
})

test('unknown procedures and unreadable frontmatter are clear errors that change nothing', async (t) => {
  const { store, dir } = setup(t)
  await store.create({ slug: 'backup', description: 'Back up the database', body: '1. Dump.\n' })
  await assert.rejects(store.create({ slug: 'backup', description: 'x', body: 'y' }), (e) => EngramError.is(e) && e.code === 'invalid_argument')
  await assert.rejects(store.reportOutcome('bakup', true), (e) => EngramError.is(e) && e.code === 'not_found' && /Did you mean "backup"/.test(e.fix ?? ''))
  const broken = '---\ndescription: [unclosed\n---\nsteps\n'
  writeFileSync(join(dir, 'broken.md'), broken)
  await assert.rejects(store.reportOutcome('broken', true), (e) => EngramError.is(e) && e.code === 'storage_corrupt')
  assert.equal(readFileSync(join(dir, 'broken.md'), 'utf8'), broken)
})

test('report_procedure_outcome through the dispatcher', async (t) => {
  const { store } = setup(t)
  const created = await store.create({ slug: 'release', description: 'Cut a release', body: '1. Tag.\n', autoDistilled: true })
  assert.equal(created.confidence, 0.4)
  const dispatcher = createToolDispatcher({ tools: [createReportProcedureOutcomeTool(store)] })
  const ok = await dispatcher.execute('report_procedure_outcome', { procedure: 'release', success: false, note: 'tagging failed' })
  assert.equal(ok.isError, undefined)
  assert.match(ok.text, /Recorded a failure for "release": 0 of 1 reported runs succeeded \(confidence 0\.00\)/)
  const missing = await dispatcher.execute('report_procedure_outcome', { procedure: 'relase', success: true })
  assert.equal(missing.isError, true)
  assert.match(missing.text, /No procedure is named "relase"[\s\S]*Did you mean "release"/)
  const bad = await dispatcher.execute('report_procedure_outcome', { procedure: 'release' })
  assert.match(bad.text, /Invalid input[\s\S]*success/)
})
