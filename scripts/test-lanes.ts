/**
 * The two test lanes (decision 0064). `npm test` runs every test file, as CI does; `npm run
 * test:quick`, the inner loop, runs every file but the slow ones. A file is slow when its first line
 * says so — `// @slow: <why>` — and it is slow by what it is for: killing processes mid-work, many
 * processes or clients at once, fuzzing and long simulations, a real browser, building the package
 * from scratch. The mark sits in the file, so a new test is in the quick lane until its author
 * marks it, and a renamed one keeps its lane.
 *
 * `node scripts/test-lanes.ts quick` prints the quick lane's files, one a line (scripts/run.sh reads
 * them); `node scripts/test-lanes.ts slow` the slow ones with why.
 */
import { globSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'

const SLOW_MARK = /^\/\/ @slow: (.+)$/

/** Every test file `npm test` runs (its globs), relative to `root`, sorted. */
export function testFiles(root: string): string[] {
  return globSync(['src/**/*.test.ts', 'test/**/*.test.ts'], { cwd: root }).sort()
}

/** Why the file is slow (its first line's `// @slow: why`), or undefined for a file of the quick lane. */
export function slowReason(root: string, file: string): string | undefined {
  const firstLine = readFileSync(resolve(root, file), 'utf8').split('\n', 1)[0] ?? ''
  return SLOW_MARK.exec(firstLine)?.[1]
}

/** The files of `npm run test:quick`: every test file but the slow ones. */
export function quickTestFiles(root: string): string[] {
  return testFiles(root).filter((file) => slowReason(root, file) === undefined)
}

if (import.meta.main) {
  const root = resolve(import.meta.dirname, '..')
  const lane = process.argv[2]
  if (lane === 'quick') console.log(quickTestFiles(root).join('\n'))
  else if (lane === 'slow') for (const file of testFiles(root)) {
    const why = slowReason(root, file)
    if (why !== undefined) console.log(`${file}: ${why}`)
  }
  else {
    console.error('usage: node scripts/test-lanes.ts quick|slow')
    process.exit(2)
  }
}
