// @slow: rebuilds the offline resources from their source packages
/**
 * The offline resources in resources/ (decision 0040) are exactly what scripts/build-resources.ts
 * makes from its source packages, and they ship in the package: they cannot drift silently.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { buildResources, type Manifest, RESOURCES, shippedDifferences } from '../scripts/build-resources.ts'

const shipped = JSON.parse(readFileSync(join(RESOURCES, 'manifest.json'), 'utf8')) as Manifest

test('every shipped resource has the size and SHA-256 its manifest records', () => {
  assert.deepEqual(Object.keys(shipped.files).sort(), ['glove-100d.i8', 'glove-100d.words.idx', 'glove-100d.words.txt', 'o200k.ranks', 'wordnet-related.idx', 'wordnet-related.txt'])
  assert.deepEqual(shippedDifferences(RESOURCES, shipped), [])
})

test('the build script, run on the source packages, makes the shipped resources byte for byte', () => {
  const out = mkdtempSync(join(tmpdir(), 'engram-resources-'))
  try {
    const built = buildResources(out)
    assert.deepEqual(built, shipped)
    assert.deepEqual(shippedDifferences(out, shipped), [])
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})

/** Sources engram also runs: gpt-tokenizer's encoder counts tokens when o200k.ranks is missing (decision 0082). */
const RUNTIME_SOURCES = ['gpt-tokenizer']

test('the package ships resources/ and depends on the word sources only to build them', () => {
  const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8')) as { files: string[]; dependencies: Record<string, string>; devDependencies: Record<string, string> }
  assert.ok(pkg.files.includes('resources'))
  for (const source of RUNTIME_SOURCES) assert.ok(pkg.dependencies[source], `${source} is not a runtime dependency`)
  for (const source of Object.keys(shipped.sources).filter((name) => !RUNTIME_SOURCES.includes(name))) {
    assert.equal(pkg.dependencies[source], undefined, `${source} is a runtime dependency`)
    assert.ok(pkg.devDependencies[source], `${source} is not a development dependency (scripts/build-resources.ts reads it)`)
  }
})
