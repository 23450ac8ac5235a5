/**
 * The oldest Node engram supports is said in one place (decision 0068): `MINIMUM_NODE_VERSION`,
 * which package.json's `engines` repeats; and no module of the package links `node:sqlite` or
 * `enableCompileCache` by a static import, which an older Node rejects before our refusal can run.
 * test/old-node.test.ts runs the built package on a real old Node.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { EngramError, ErrorCode } from './errors.ts'
import { MINIMUM_NODE_VERSION, requireSupportedNode, unsupportedNodeError } from './node-version.ts'

const root = resolve(import.meta.dirname, '../..')

test("package.json's engines gives the same minimum as MINIMUM_NODE_VERSION", () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines?: { node?: string } }
  assert.equal(manifest.engines?.node, `>=${MINIMUM_NODE_VERSION}`)
})

test('versions from the minimum on are supported, older ones are not', () => {
  for (const version of ['22.13.0', '22.13.1', 'v22.14.0', '23.0.0', '24.11.1', '100.0.0']) assert.equal(unsupportedNodeError(version), undefined, version)
  for (const version of ['22.12.9', 'v22.5.1', '22.0.0', '20.20.2', '18.19.0', '9.99.99']) assert.ok(unsupportedNodeError(version), version)
})

test('the refusal names the version found, the version needed and how to get it', () => {
  assert.equal(unsupportedNodeError(process.versions.node), undefined, 'the Node running the tests is supported')
  assert.doesNotThrow(() => requireSupportedNode())
  const error = unsupportedNodeError('20.20.2')
  assert.ok(EngramError.is(error))
  assert.equal(error.code, ErrorCode.unsupported)
  assert.equal(error.category, 'system')
  assert.match(error.message, /Node\.js 20\.20\.2 .*engram needs Node\.js 22\.13 or newer/)
  assert.ok(error.message.includes(process.execPath), 'the message says which binary is too old')
  assert.match(error.fix ?? '', /nvm install --lts.*fnm install --lts.*official installer/)
  assert.deepEqual(error.details, { node: '20.20.2', required: '>=22.13' })
})

/** Production modules under src/ (not tests nor their helpers), relative to src/. */
function productionModules(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(join(root, 'src'), join(entry.parentPath, entry.name)))
    .filter((file) => !/(^|\/)(test-support|contract-tests|fixtures)\/|\.test\.ts$/.test(file))
}

test('no module of the package links node:sqlite or enableCompileCache statically', () => {
  const modules = productionModules(join(root, 'src'))
  assert.ok(modules.includes('storage/node-sqlite.ts'))
  const offenders: string[] = []
  for (const file of modules) {
    const source = readFileSync(join(root, 'src', file), 'utf8')
    // `import type` is erased; any other import of node:sqlite is linked when the module loads.
    if (/^\s*import\s+(?!type\b)[^'";]*\bfrom\s+['"]node:sqlite['"]/m.test(source) || /^\s*import\s+['"]node:sqlite['"]/m.test(source)) offenders.push(`${file}: node:sqlite`)
    if (/^\s*import\s*\{[^}]*\benableCompileCache\b[^}]*\}\s*from\s+['"]node:module['"]/m.test(source)) offenders.push(`${file}: enableCompileCache`)
  }
  assert.deepEqual(offenders, [], 'load these through storage/node-sqlite.ts, or behind a check of the running Node')
})
