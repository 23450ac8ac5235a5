/**
 * The two test lanes (decision 0064): `npm test` runs every test file; `npm run test:quick` every
 * file but those whose first line marks them slow, and nothing in it needs a browser.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { quickTestFiles, slowReason, testFiles } from '../scripts/test-lanes.ts'

const root = resolve(import.meta.dirname, '..')

test('the quick lane is every test file but the slow ones, and each slow one says why', () => {
  const all = testFiles(root)
  const quick = quickTestFiles(root)
  const slow = all.filter((file) => !quick.includes(file))
  assert.ok(all.includes('test/test-lanes.test.ts') && all.includes('src/core/engram.test.ts'), 'both trees of tests are found')
  assert.ok(quick.includes('test/test-lanes.test.ts'))
  assert.ok(slow.includes('test/simulated-year.test.ts') && slow.includes('test/consolidation-kill.test.ts'))
  for (const file of slow) assert.match(slowReason(root, file) ?? '', /\w{3,}/, `${file} is marked slow without saying why`)
  // A mark anywhere but the first line is not one: the lane of a file is read in one place.
  assert.equal(slowReason(root, 'scripts/test-lanes.ts'), undefined)
})

test('no file of the quick lane drives a browser: the quick lane needs no Chromium', () => {
  const browserFiles = testFiles(root).filter((file) => /from '\.\/support\/browser\.ts'/.test(readFileSync(join(root, file), 'utf8')))
  assert.ok(browserFiles.length > 0, 'the browser tests are found')
  const inQuick = browserFiles.filter((file) => quickTestFiles(root).includes(file))
  assert.deepEqual(inQuick, [], `mark these // @slow: ${inQuick.join(', ')}`)
})

test('npm run test:quick runs the quick lane; npm test runs every file', () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  assert.equal(scripts['test:quick'], 'bash scripts/run.sh test:quick')
  assert.equal(scripts.test, 'bash scripts/run.sh test')
  const runner = readFileSync(join(root, 'scripts/run.sh'), 'utf8')
  assert.match(runner, /--test-timeout=600000 \\\n\s+"src\/\*\*\/\*\.test\.ts" "test\/\*\*\/\*\.test\.ts"/, 'npm test keeps its globs')
  assert.match(runner, /scripts\/test-lanes\.ts quick/)
})
