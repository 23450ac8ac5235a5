/**
 * The build ships the package and nothing of its tests (decision 0064): tsconfig.json compiles the
 * entry points package.json declares (`exports` and `bin`) and what they import, so a test, a
 * test-support helper or a child script a test spawns by path never lands in dist/. Checked on a
 * real build into a temp folder, as `npm run build` makes it.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { after, before, test } from 'node:test'

const root = resolve(import.meta.dirname, '..')
/** Folders and names that hold only test code, wherever they sit under src/. */
const TEST_ONLY = /(^|\/)(test-support|contract-tests|fixtures)\/|\.test\.[^/]*$/

let out = ''
before(() => {
  out = mkdtempSync(join(tmpdir(), 'engram-build-'))
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), '--outDir', out], { cwd: root, stdio: 'pipe' })
})
after(() => rmSync(out, { recursive: true, force: true }))

/** The build's files of package.json's `exports` and `bin`, relative to dist/ (`index.js`, `interfaces/cli/bin.js`, …). */
function packageEntries(): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { default: string }>; bin: Record<string, string> }
  const targets = [...Object.values(manifest.exports).map((entry) => entry.default), ...Object.values(manifest.bin)]
  return targets.map((target) => {
    assert.match(target, /^\.\/dist\/.+\.js$/, `package.json points at ${target}, outside the build`)
    return target.slice('./dist/'.length)
  })
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)))
}

/** Every module of the build the entries load, following `import … from`, `export … from` and `import('…')` of relative paths, in code and declarations. */
function reachedFrom(entries: string[]): Set<string> {
  const seen = new Set<string>()
  const stack = entries.map((entry) => join(out, entry))
  while (stack.length > 0) {
    const file = stack.pop() as string
    if (seen.has(file)) continue
    seen.add(file)
    // A module holding only types is reached through `import type`, which only its .d.ts keeps.
    const declarations = file.replace(/\.js$/, '.d.ts')
    const source = readFileSync(file, 'utf8') + (existsSync(declarations) ? readFileSync(declarations, 'utf8') : '')
    const specifiers = [
      ...source.matchAll(/^\s*(?:import|export)\s+(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]/gm),
      ...source.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g),
    ].map((match) => match[1] as string)
    for (const specifier of specifiers) {
      // Declarations keep the source's `.ts`; the module is its `.js`.
      const target = resolve(dirname(file), specifier.replace(/\.ts$/, '.js'))
      assert.ok(existsSync(target), `${relative(out, file)} imports ${specifier}, which the build does not have`)
      stack.push(target)
    }
  }
  return new Set([...seen].map((file) => relative(out, file)))
}

test('tsconfig.json builds exactly the entry points package.json declares', () => {
  // JSON with comments: drop the `//` lines before parsing.
  const text = readFileSync(join(root, 'tsconfig.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')
  const config = JSON.parse(text) as { files?: string[]; include?: string[] }
  assert.equal(config.include, undefined, 'an `include` would build every file under it, tests and their helpers too')
  const fromManifest = packageEntries().map((entry) => `src/${entry.replace(/\.js$/, '.ts')}`)
  assert.deepEqual([...(config.files ?? [])].sort(), fromManifest.sort())
})

test('no test-only file lands in the build, and every file in it is loaded by an entry point', () => {
  // The rule has something to keep out: src/ holds tests, test-support helpers and child scripts.
  const sourceTestFiles = filesUnder(join(root, 'src')).filter((file) => TEST_ONLY.test(file))
  assert.ok(sourceTestFiles.some((file) => /(^|\/)test-support\/.*child\.ts$/.test(file)), 'src/ has child scripts under test-support/')
  assert.ok(sourceTestFiles.some((file) => file.endsWith('.test.ts')))

  const built = filesUnder(out)
  const testOnly = built.filter((file) => TEST_ONLY.test(file))
  assert.deepEqual(testOnly, [], `the build holds test code: ${testOnly.join(', ')}`)
  const reached = reachedFrom(packageEntries())
  const stray = built.filter((file) => file.endsWith('.js') && !reached.has(file))
  assert.deepEqual(stray, [], `the build holds modules no entry point loads: ${stray.join(', ')}`)
})

test('engram/test, the public test helpers, is in the build with everything it loads', () => {
  for (const file of ['test.js', 'test.d.ts']) assert.ok(existsSync(join(out, file)), `the build has no ${file}`)
  const reached = reachedFrom(['test.js'])
  for (const file of ['testing/temp-home.js', 'testing/fake-openai-server.js', 'testing/fake-models.js']) {
    assert.ok(reached.has(file), `dist/test.js does not load ${file}`)
  }
})
