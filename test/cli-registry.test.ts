/**
 * The command registry (decision 0041): `engram --help` lists every command from data, and a
 * command's module is loaded only when it runs. Each entry's module names the same words, every
 * command module is registered, and `--help` loads none of them.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { COMMANDS } from '../src/interfaces/cli/commands/index.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'

const commandsDir = resolve(import.meta.dirname, '../src/interfaces/cli/commands')

test('each registry entry loads a command with its own words', async () => {
  const seen = new Set<string>()
  for (const entry of COMMANDS) {
    const name = entry.path.join(' ')
    assert.ok(!seen.has(name), `"${name}" is registered twice`)
    seen.add(name)
    assert.ok(entry.summary.length > 0, `"${name}" has no summary`)
    const command = await entry.load()
    assert.deepEqual(command.path, entry.path, `the module of "${name}" names ${command.path.join(' ')}`)
    assert.equal(typeof command.run, 'function')
  }
})

test('every command a module defines is in the registry', () => {
  const registered = new Set(COMMANDS.map((entry) => entry.path.join(' ')))
  const defined: string[] = []
  for (const file of readdirSync(commandsDir, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue
    const source = readFileSync(join(commandsDir, file), 'utf8')
    for (const match of source.matchAll(/^export const \w+: Command = \{\n {2}path: (\[[^\]]*\]),$/gm)) {
      const path = JSON.parse((match[1] as string).replaceAll("'", '"')) as string[]
      defined.push(`${path.join(' ')} (${relative(commandsDir, join(commandsDir, file))})`)
      assert.ok(registered.has(path.join(' ')), `${path.join(' ')}, defined in ${file}, is not in commands/index.ts`)
    }
  }
  assert.equal(defined.length, COMMANDS.length, `modules define ${defined.length} commands, the registry lists ${COMMANDS.length}`)
})

test('engram --help lists every command; a command help shows its summary, usage and options', async () => {
  let out = ''
  const io = { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env: {}, cwd: process.cwd(), isTTY: false }
  assert.equal(await runCli(['--help'], io), 0)
  for (const entry of COMMANDS) assert.match(out, new RegExp(`\\n {2}${entry.path.join(' ')} +${entry.summary.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
  out = ''
  assert.equal(await runCli(['search', '--help'], io), 0)
  assert.match(out, /^Usage: engram search QUERY/)
  assert.match(out, /Search every kind of memory/)
  assert.match(out, /--limit N/)
})

test('options of the command after its words; one before them is named by the strict parse', async () => {
  let out = ''
  const io = { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env: {}, cwd: process.cwd(), isTTY: false }
  assert.equal(await runCli(['skills', '--events', '5', 'save', '--json'], io), 2)
  assert.match(out, /Unknown option '--events'/)
})
