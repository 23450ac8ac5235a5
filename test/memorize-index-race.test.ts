// @slow: agent processes memorizing on one home at once, then every memory searched for
/**
 * Memories saved by several processes on one home at once are all in the search index when they
 * are done (decision 0097). After a save, a mind reindexes the memory files, and a reindex removes
 * from the index the units of a file it no longer finds there: a process that read a file before
 * another's save, and wrote the index after the other had indexed it, removed the other's new memory
 * until that file changed again (seen as `engram serve` with two processes not finding a lesson it
 * had acknowledged). Reindexes now run one at a time across the home.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createMind } from '../src/mind.ts'
import { memorizeCall, runMemorizers } from '../src/memory/engrams/test-support/memorize-contention.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

test('4 processes × 30 memorize calls in flight on one home: the index finds every memory saved, without a reindex', { timeout: 300_000 }, async () => {
  const temp = makeTempHome('engram-index-race-')
  try {
    await (await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true })).close()
    const options = { home: temp.home, env: temp.env, workers: 4, count: 30, how: 'in-flight', owners: 'agent' } as const
    const { tallies } = await runMemorizers(options)
    // The index as the processes left it: no reindex when this mind opens.
    const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, reindexOnOpen: false })
    try {
      const missing: string[] = []
      let searched = 0
      for (const tally of tallies) {
        for (const i of tally.saved) {
          const call = memorizeCall(tally.worker, i, 'agent')
          if (call.entry.kind !== 'lesson') continue
          searched++
          const hits = await mind.memories.search(`ref-${call.ref}`, { limit: 5 })
          if (!hits.some((hit) => hit.text.includes(`ref-${call.ref}:`))) missing.push(call.entry.text)
        }
      }
      assert.ok(searched >= 25, `${searched} lessons searched`)
      assert.deepEqual(missing, [], 'saved lessons the index does not find')
    } finally {
      await mind.close()
    }
  } finally {
    temp.cleanup()
  }
})
