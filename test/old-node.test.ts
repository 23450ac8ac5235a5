// @slow: builds the package and runs it on a real Node older than engram supports
/**
 * On a Node older than engram supports (decision 0068), the built package refuses clearly: the
 * `engram` binary and `import 'engram'` → `createMind` say the version found, the version needed
 * and how to get a newer one, with no stack trace and none of the link errors an older Node raises
 * for a built-in it lacks. Every public entry still loads there, so the refusal is what a host sees.
 *
 * It needs a Node older than `MINIMUM_NODE_VERSION` on the machine: `ENGRAM_OLD_NODE`, else a
 * `node` on PATH, `/usr/bin/node` or `/usr/local/bin/node` that is old enough (CI machines have
 * Node 20 preinstalled). Without one the tests are skipped, saying so.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { MINIMUM_NODE_VERSION, unsupportedNodeError } from '../src/core/node-version.ts'

const root = resolve(import.meta.dirname, '..')

/** The first Node binary found that is older than engram supports, with its version. */
function findOldNode(): { path: string; version: string } | undefined {
  const candidates = [
    process.env.ENGRAM_OLD_NODE,
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => (dir ? join(dir, 'node') : undefined)),
    '/usr/bin/node',
    '/usr/local/bin/node',
  ]
  for (const path of candidates) {
    if (!path || !existsSync(path)) continue
    try {
      const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
      if (unsupportedNodeError(version)) return { path, version }
    } catch {}
  }
  return undefined
}

const oldNode = findOldNode()
const skip = oldNode ? false : `no Node older than ${MINIMUM_NODE_VERSION} on this machine (set ENGRAM_OLD_NODE to one to run these)`

/** The package as installed: package.json, the build in dist/, resources/ and the dependencies beside it. */
let pkg = ''
let work = ''
before(() => {
  if (!oldNode) return
  work = mkdtempSync(join(tmpdir(), 'engram-old-node-'))
  pkg = join(work, 'engram')
  mkdirSync(pkg)
  copyFileSync(join(root, 'package.json'), join(pkg, 'package.json'))
  symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'))
  symlinkSync(join(root, 'resources'), join(pkg, 'resources'))
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), '--outDir', join(pkg, 'dist')], { cwd: root, stdio: 'pipe' })
})
after(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

/** Run `args` with the old Node in a fresh HOME (ENGRAM_HOME inside it), stdout and stderr pipes (not a terminal). */
function runOld(args: string[]): { status: number | null; stdout: string; stderr: string; home: string } {
  const home = mkdtempSync(join(work, 'home-'))
  const result = spawnSync((oldNode as { path: string }).path, args, {
    cwd: work,
    encoding: 'utf8',
    env: { HOME: home, PATH: process.env.PATH ?? '', ENGRAM_HOME: join(home, 'engram') },
    timeout: 60_000,
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, home }
}

/** The refusal's three facts, and none of what Node says itself when a module links a missing built-in. */
function assertClearRefusal(text: string): void {
  const { version } = oldNode as { version: string }
  assert.ok(text.includes(`Node.js ${version}`), `the version found (${version}) is named:\n${text}`)
  assert.ok(text.includes(`engram needs Node.js ${MINIMUM_NODE_VERSION} or newer`), `the version needed is named:\n${text}`)
  assert.match(text, /nvm install --lts.*official installer/, 'how to get it is said')
  for (const linkError of ['does not provide an export', 'No such built-in module', 'ERR_UNKNOWN_BUILTIN_MODULE', 'SyntaxError']) assert.ok(!text.includes(linkError), `"${linkError}" in:\n${text}`)
  assert.doesNotMatch(text, /^\s+at /m, `no stack trace:\n${text}`)
}

test('the engram binary refuses an old Node with the version found, the one needed and how to get it', { skip }, () => {
  const bin = join(pkg, 'dist/interfaces/cli/bin.js')
  // Not a terminal: the JSON envelope on stdout (decision 0005), the same words on stderr for a person.
  const version = runOld([bin, '--version'])
  assert.equal(version.status, 4, `exit code 4 (system), got ${version.status}:\n${version.stdout}${version.stderr}`)
  const envelope = JSON.parse(version.stdout) as { ok: boolean; command: string; error: { code: string; message: string; fix: string; details: Record<string, unknown> } }
  assert.equal(envelope.ok, false)
  assert.equal(envelope.command, 'version')
  assert.equal(envelope.error.code, 'unsupported')
  assert.deepEqual(envelope.error.details, { node: oldNode?.version, required: `>=${MINIMUM_NODE_VERSION}` })
  assertClearRefusal(`${envelope.error.message}\n${envelope.error.fix}`)
  assertClearRefusal(version.stderr)

  const status = runOld([bin, 'status', '--human'])
  assert.equal(status.status, 4)
  assert.equal(status.stdout, '')
  assert.match(status.stderr, /^engram status: Node\.js /)
  assertClearRefusal(status.stderr)
})

test("import 'engram' loads on an old Node and createMind refuses it clearly, before touching the home", { skip }, () => {
  const script = `
    const engram = await import(${JSON.stringify(join(pkg, 'dist/index.js'))})
    try {
      await engram.createMind()
      console.log('opened')
    } catch (error) {
      console.log(JSON.stringify({ is: engram.EngramError.is(error), code: error.code, message: error.message, fix: error.fix }))
    }`
  const run = runOld(['--input-type=module', '-e', script])
  assert.equal(run.status, 0, run.stderr)
  const refusal = JSON.parse(run.stdout) as { is: boolean; code: string; message: string; fix: string }
  assert.equal(refusal.is, true, 'an EngramError')
  assert.equal(refusal.code, 'unsupported')
  assertClearRefusal(`${refusal.message}\n${refusal.fix}\n${run.stderr}`)
  assert.deepEqual(readdirSync(run.home), [], 'nothing was written under HOME or ENGRAM_HOME')
})

test('every public entry loads on an old Node, and opening either backend refuses it before touching the home', { skip }, () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { default: string }> }
  const entries = Object.values(manifest.exports).map((entry) => join(pkg, entry.default))
  assert.ok(entries.length >= 6, 'the root, mcp, ai-sdk, postgres, cli and test entries')
  const script = `
    for (const entry of ${JSON.stringify(entries)}) await import(entry)
    const { openEmbeddedBackend } = await import(${JSON.stringify(join(pkg, 'dist/index.js'))})
    const { openPostgresBackend } = await import(${JSON.stringify(join(pkg, 'dist/postgres.js'))})
    const refusals = []
    for (const open of [() => openEmbeddedBackend({ home: process.env.ENGRAM_HOME, agent: 'default' }), () => openPostgresBackend({ url: 'postgres://127.0.0.1:1/engram' })]) {
      try { await open(); refusals.push('opened') } catch (error) { refusals.push({ code: error.code, text: error.message + '\\n' + error.fix }) }
    }
    console.log(JSON.stringify(refusals))`
  const run = runOld(['--input-type=module', '-e', script])
  assert.equal(run.status, 0, run.stderr)
  const refusals = JSON.parse(run.stdout) as Array<{ code: string; text: string } | 'opened'>
  assert.equal(refusals.length, 2)
  for (const refusal of refusals) {
    assert.ok(refusal !== 'opened', 'a backend opened on an old Node')
    assert.equal(refusal.code, 'unsupported')
    assertClearRefusal(refusal.text)
  }
  assert.deepEqual(readdirSync(run.home), [], 'the embedded backend created nothing in its home')
})
