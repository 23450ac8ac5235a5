/**
 * End-to-end tests of the `engram` command, run as a real child process (as a user or an agent
 * runs it), against a temp home.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

interface CliResult {
  code: number
  stdout: string
  stderr: string
  json: { ok: boolean; command: string; data?: unknown; error?: { code: string; message: string; fix?: string; details?: unknown } }
}

async function engram(tmp: TempHome, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env: { ...tmp.env, ...env }, cwd: root })
    return { code: 0, stdout, stderr, json: parse(stdout) }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr, json: parse(e.stdout) }
  }
}
function parse(stdout: string): CliResult['json'] {
  try {
    return JSON.parse(stdout.trim().split('\n').pop() ?? '')
  } catch {
    return { ok: false, command: '' }
  }
}

test('init creates the home; status counts memories; JSON is the default off a terminal', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const init = await engram(tmp, ['--home', tmp.home, 'init'])
  assert.equal(init.code, 0, init.stderr)
  assert.equal(init.json.ok, true)
  assert.ok(existsSync(join(tmp.home, 'engram.db')))
  assert.ok(existsSync(join(tmp.home, 'agents/default/memory')))
  assert.ok(existsSync(join(tmp.home, 'shared/users')))

  const memory = join(tmp.home, 'agents/default/memory')
  writeFileSync(join(memory, 'rules.md'), '# Rules\n\n## Always\n- Use metric units <!-- confidence:high source:user ts:2026-02-27 -->\n\n## Never\n- Use tabs\n')
  writeFileSync(join(memory, 'lessons.md'), '# Lessons\n- The CI runner has 2 cores <!-- topic:ci ts:2026-02-27 -->\n')
  const status = await engram(tmp, ['status', '--home', tmp.home])
  assert.equal(status.code, 0, status.stderr)
  const data = status.json.data as { memory: { global: { rules: { always: number; never: number }; lessons: number } }; index: { units: number }; capabilities: { fullText: boolean } }
  assert.equal(data.memory.global.rules.always, 1)
  assert.equal(data.memory.global.rules.never, 1)
  assert.equal(data.memory.global.lessons, 1)
  assert.equal(data.index.units, 3, 'hand-written entries are indexed on open')
  assert.equal(data.capabilities.fullText, true)

  const human = await engram(tmp, ['status', '--home', tmp.home, '--human'])
  assert.match(human.stdout, /global rules\s+1 always, 1 never, 0 when/)
})

test('doctor --json reports the capabilities found', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  await engram(tmp, ['init', '--home', tmp.home])
  const doctor = await engram(tmp, ['doctor', '--home', tmp.home, '--json'])
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr)
  const data = doctor.json.data as { healthy: boolean; checks: Array<{ name: string; status: string; detail: string; fix?: string }> }
  assert.equal(data.healthy, true)
  const byName = Object.fromEntries(data.checks.map((c) => [c.name, c]))
  assert.equal(byName['full-text search']?.status, 'ok')
  assert.match(byName.sqlite?.detail ?? '', /\d+\.\d+/)
  assert.ok(['ok', 'warn'].includes(byName['vector search']?.status ?? ''))
  assert.equal(byName.llm?.status, 'warn', 'no LLM configured is a warning, not a failure: offline works')
  assert.match(byName.llm?.fix ?? '', /ENGRAM_LLM_PROVIDER/)
  assert.equal(byName.embedder?.status, 'ok')
})

test('a configuration with three mistakes: exit 3 and all three named with fixes', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  mkdirSync(tmp.home, { recursive: true })
  writeFileSync(join(tmp.home, 'config.json'), JSON.stringify({ memory: { mode: 'maybe' }, context: { freshTail: -1 } }))
  const result = await engram(tmp, ['status', '--home', tmp.home], { ENGRAM_LLM_TIMEOUT_MS: 'soon' })
  assert.equal(result.code, 3)
  assert.equal(result.json.error?.code, 'config_invalid')
  const message = result.json.error?.message ?? ''
  assert.match(message, /3 problems/)
  assert.match(message, /memory\.mode/)
  assert.match(message, /context\.freshTail/)
  assert.match(message, /ENGRAM_LLM_TIMEOUT_MS/)
})

test('a refusal in --json carries its message and its fix apart (decision 0062)', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  mkdirSync(tmp.home, { recursive: true })
  const result = await engram(tmp, ['confirm', '--accept', '999', '--home', tmp.home])
  assert.equal(result.code, 3)
  assert.equal(result.json.error?.code, 'not_found')
  assert.equal(result.json.error?.message, 'No pending confirmation has the id 999.')
  assert.equal(result.json.error?.fix, 'Run `engram confirm` to list the pending ones and their ids.')
})

test('config shows each value and its source', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  mkdirSync(tmp.home, { recursive: true })
  const result = await engram(tmp, ['config', '--home', tmp.home, '--set', 'context.budget=9000'], { ENGRAM_MEMORY_MODE: 'copilot', ENGRAM_LLM_API_KEY: 'sk-very-secret' })
  assert.equal(result.code, 0, result.stderr)
  const settings = (result.json.data as { settings: Array<{ key: string; value: string; source: string }> }).settings
  const byKey = Object.fromEntries(settings.map((s) => [s.key, s]))
  assert.deepEqual([byKey['memory.mode']?.value, byKey['memory.mode']?.source], ['copilot', 'env'])
  assert.deepEqual([byKey['context.budget']?.value, byKey['context.budget']?.source], ['9000', 'flag'])
  assert.deepEqual([byKey['context.freshTail']?.value, byKey['context.freshTail']?.source], ['20', 'default'])
  assert.equal(byKey['llm.apiKey']?.value, '********')
  assert.ok(!result.stdout.includes('sk-very-secret'), 'secrets never printed')
})

test('reindex notices a hand edit and keeps an unreadable line, reporting it', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  await engram(tmp, ['init', '--home', tmp.home])
  const lessons = join(tmp.home, 'agents/default/memory/lessons.md')
  writeFileSync(lessons, '# Lessons\n- First lesson <!-- ts:2026-01-01 -->\n')
  const first = await engram(tmp, ['reindex', '--home', tmp.home])
  assert.equal((first.json.data as { added: number }).added, 1)
  appendFileSync(lessons, 'garbage that is not an entry\n- Second lesson <!-- ts:2026-01-02 -->\n')
  const second = await engram(tmp, ['reindex', '--home', tmp.home])
  const report = second.json.data as { added: number; unchanged: number; problems: Array<{ line: number; text: string }> }
  assert.equal(report.added, 1)
  assert.equal(report.unchanged, 1)
  assert.deepEqual(report.problems.map((p) => [p.line, p.text]), [[3, 'garbage that is not an entry']])
  assert.match(readFileSync(lessons, 'utf8'), /garbage that is not an entry/, 'the unreadable line is still in the file')
})

test('usage errors: unknown command and unknown flag exit 2 with a hint', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const unknown = await engram(tmp, ['frobnicate'])
  assert.equal(unknown.code, 2)
  assert.match(unknown.json.error?.fix ?? '', /engram --help/)
  const badFlag = await engram(tmp, ['status', '--home', tmp.home, '--frob'])
  assert.equal(badFlag.code, 2)
  const human = await engram(tmp, ['status', '--frob', '--human'])
  assert.equal(human.code, 2)
  assert.match(human.stderr, /engram status: .*frob/)
})

test('--version matches package.json', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
  const result = await engram(tmp, ['--version', '--json'])
  assert.deepEqual(result.json.data, { version: pkg.version })
})
