/**
 * `maintain()` on a home of large notes alike in their words (decision 0088; the home of
 * test/serve-slow-clients.test.ts, smaller): the weekly integration compares every pair of live
 * knowledge documents, and used to read both texts' facts again for each pair — on 160 notes of
 * 135 KB more than ten minutes of CPU with the event loop held throughout, so a server running its
 * scheduled maintenance stopped answering. Each document's facts are now read once, and the
 * comparison lets the event loop run: a timer keeps firing while maintenance runs, and the
 * duplicate among the notes is still merged.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { parseFrontmatter } from '../src/core/frontmatter.ts'
import { createMind } from '../src/mind.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const TOPICS = 40
/** What the timer may wait, at most, while maintenance runs (the old comparison held it for the whole run). */
const LONGEST_HOLD_MS = 3_000

const note = (i: number, words = 'kept in full'): string => `# Topic ${i}\n\n${`Fact ${i} about the Orion relay, ${words}. `.repeat(3_000)}\n`

test(`maintain() on ${TOPICS} notes of 135 KB alike in their words lets the event loop run and still merges their duplicate`, async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const options = { home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings: { 'jobs.eager': false } }
  const builder = await openMindInternals(options)
  try {
    for (let i = 0; i < TOPICS; i++) {
      await builder.backend.documents.write('knowledge', `topic-${i}`, { confidence: 0.8, created_at: clock.now().toISOString() }, note(i))
      clock.advance(60_000)
    }
    // The same facts in other words: a duplicate of topic-3, written last (so it survives the merge).
    await builder.backend.documents.write('knowledge', 'topic-3-again', { confidence: 0.8, created_at: clock.now().toISOString() }, note(3, 'kept whole'))
  } finally {
    await builder.close()
  }
  clock.advanceDays(7)
  // Opened first: indexing the notes written behind the index's back is the opening's work, not maintenance's.
  const mind = await createMind(options)
  t.after(() => mind.close())

  let last = performance.now()
  let longest = 0
  const timer = setInterval(() => {
    longest = Math.max(longest, performance.now() - last)
    last = performance.now()
  }, 10)
  let report: Awaited<ReturnType<typeof mind.maintain>>
  try {
    report = await mind.maintain()
  } finally {
    clearInterval(timer)
  }
  longest = Math.max(longest, performance.now() - last)

  const weekly = report.jobs.find((job) => job.kind === 'consolidation-weekly')
  assert.equal(weekly?.status, 'done', JSON.stringify(weekly))
  assert.equal((weekly?.result as { merged?: number } | undefined)?.merged, 1, JSON.stringify(weekly))
  assert.ok(longest < LONGEST_HOLD_MS, `the event loop was held ${Math.round(longest)} ms at a stretch while maintenance ran`)
  const merged = parseFrontmatter(readFileSync(join(tmp.home, 'agents', 'default', 'archive', 'merged', 'knowledge', 'topic-3.md'), 'utf8')).frontmatter
  assert.equal(merged.merged_into, 'topic-3-again')
})
