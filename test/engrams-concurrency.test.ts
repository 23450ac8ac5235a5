// @slow: many processes writing one memory at once
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parseMemoryFile, entriesOf, problemsOf } from '../src/core/markdown-entry.ts'
import { openEmbeddedBackend } from '../src/storage/embedded.ts'
import { ManualClock } from '../src/core/clock.ts'
import { runChild } from '../src/storage/files/test-support/run-children.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const child = fileURLToPath(new URL('../src/memory/engrams/test-support/encode-lessons-child.ts', import.meta.url))

describe('encode() across processes', () => {
  it('8 processes × 200 distinct lessons leave exactly 1,600 entries, each once, in a file that parses', { timeout: 120_000 }, async () => {
    const temp = makeTempHome('engram-concurrency-')
    try {
      // Create the home (and migrate the database) once, so the children race only on memory files.
      await openEmbeddedBackend({ home: temp.home, agent: 'default', clock: new ManualClock() }).close()
      const workers = 8
      const perWorker = 200
      const results = await Promise.all(Array.from({ length: workers }, (_, w) => runChild(child, [temp.home, String(w), String(perWorker)])))
      assert.deepEqual(
        results.map((result) => result.stdout.trim()),
        Array.from({ length: workers }, () => String(perWorker)),
      )
      const doc = parseMemoryFile(readFileSync(join(temp.home, 'agents/default/memory/lessons.md'), 'utf8'), 'lessons')
      assert.deepEqual(problemsOf(doc), [])
      const texts = entriesOf(doc).map((entry) => entry.text)
      assert.equal(texts.length, workers * perWorker)
      assert.equal(new Set(texts).size, workers * perWorker)
      for (let w = 0; w < workers; w++) for (let i = 0; i < perWorker; i++) assert.ok(texts.includes(`worker ${w} lesson ${i}`))
    } finally {
      temp.cleanup()
    }
  })
})
