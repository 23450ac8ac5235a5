/**
 * Open no matter what (decision 0025): each file found stopping a mind from
 * opening — an entry dated `ts:yesterday`, a YAML alias bomb, a symbolic link loop, a folder named
 * like a memory file, a named pipe (which hung) — and a file of bare carriage returns, planted in a
 * home at once. The mind opens; `engram status`, `engram doctor` and `engram mcp` (real processes,
 * under a timeout, so a hang fails instead of blocking) work and name each file; the turn is told;
 * every valid entry survives a later write, and every line that could not be read is still there,
 * byte for byte. The agent cannot plant such a file itself: write_memory_file refuses it and
 * writes nothing.
 */
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { entriesOf, parseMemoryFile } from '../src/core/markdown-entry.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { call } from './support/tool-calls.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
/** A watchdog, not a speed target: a pipe read that hangs fails the test instead of CI. */
const CHILD_TIMEOUT_MS = 60_000

/** Nine anchors, each aliasing the previous one nine times: 9^9 nodes once expanded. */
function aliasBomb(): string {
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x]']
  for (let i = 1; i < 10; i++) {
    const name = String.fromCharCode(97 + i)
    lines.push(`${name}: &${name} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`)
  }
  return `---\n${lines.join('\n')}\n---\n# Bomb\n`
}

const LESSONS = '# Lessons\n- Brew green tea at 80 degrees <!-- ts:2026-01-02 -->\n- x <!-- ts:yesterday -->\n- Steep it for two minutes <!-- ts:2026-01-03 -->\n'
const RULES_CR = '# Rules\r\r## Always\r- Always warm the cup first\r\r## Never\r- Never use boiling water\r'


describe('a home with every file the issue found stopping engram', () => {
  let tmp: TempHome
  const agent = (path: string): string => join(tmp.home, 'agents', 'default', path)

  before(() => {
    tmp = makeTempHome()
    mkdirSync(agent('memory'), { recursive: true })
    mkdirSync(agent('knowledge/notes.md'), { recursive: true })
    mkdirSync(join(tmp.home, 'agents/default/users/ada/knowledge'), { recursive: true })
    writeFileSync(agent('memory/lessons.md'), LESSONS)
    writeFileSync(agent('memory/rules.md'), RULES_CR)
    writeFileSync(agent('knowledge/bomb.md'), aliasBomb())
    writeFileSync(agent('knowledge/tea.md'), '# Tea\nGreen tea grows in the hills of Uji.\n')
    symlinkSync('loop.md', agent('knowledge/loop.md'))
    execFileSync('mkfifo', [agent('knowledge/pipe.md')])
    execFileSync('mkfifo', [join(tmp.home, 'agents/default/users/ada/knowledge/pipe.md')])
    // A profile named for nobody (profiles are named after the user id, percent-encoded).
    mkdirSync(join(tmp.home, 'shared/users'), { recursive: true })
    writeFileSync(join(tmp.home, 'shared/users/my notes.md'), '# Notes about people\nAda likes tea.\n')
  })

  after(() => tmp.cleanup())

  const EXPECTED: Array<[string, number, RegExp]> = [
    ['agents/default/memory/lessons.md', 3, /ts:yesterday is not a date/],
    ['agents/default/knowledge/bomb.md', 1, /frontmatter cannot be read: Excessive alias count/],
    ['agents/default/knowledge/loop.md', 0, /a symbolic link loop/],
    ['agents/default/knowledge/notes.md', 0, /a folder, not a file/],
    ['agents/default/knowledge/pipe.md', 0, /a named pipe, not a file/],
    ['agents/default/users/ada/knowledge/pipe.md', 0, /a named pipe, not a file/],
    ['shared/users/my notes.md', 0, /a profile file whose name is no user id/],
  ]

  function assertReported(problems: ReadonlyArray<{ file: string; line: number; reason: string }>, where: string): void {
    for (const [file, line, reason] of EXPECTED) {
      assert.ok(
        problems.some((problem) => problem.file === file && problem.line === line && reason.test(problem.reason)),
        `${where}: ${file}:${line} ${reason} in ${JSON.stringify(problems)}`,
      )
    }
  }

  test('createMind opens, reindexes, reports each file and tells the turn of each viewer once', async () => {
    const mind: Mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true })
    try {
      assertReported(mind.lastReindex?.problems ?? [], 'reindex on open')
      assertReported((await mind.reindex()).problems, 'reindex')
      assertReported((await mind.status()).problems, 'status')
      // The bare-CR rules and the readable lessons are memory: they reach the prompt.
      const turn = await mind.session('chat-1').begin('How do I make green tea?')
      for (const text of ['Always: Always warm the cup first', 'Never: Never use boiling water', 'Brew green tea at 80 degrees', 'Steep it for two minutes', '- x']) {
        assert.ok(turn.system.includes(text.replace(/^(Always|Never): /, '')), `${text} in the memory context`)
      }
      const warning = turn.warnings.find((line) => line.startsWith('engram skipped'))
      assert.ok(warning, turn.warnings.join('\n'))
      assert.match(warning, /^engram skipped 5 memory files or lines/)
      assert.match(warning, /agents\/default\/knowledge\/pipe\.md \(a named pipe, not a file\)/)
      assert.doesNotMatch(warning, /users\/ada/, "another user's file names are not the agent's to see")
      const again = await mind.session('chat-1').begin('And black tea?')
      assert.ok(!again.warnings.some((line) => line.startsWith('engram skipped')), 'told once')
      const ada = await mind.session('chat-ada', { user: 'ada' }).begin('Hi')
      assert.match(ada.warnings.find((line) => line.startsWith('engram skipped')) ?? '', /^engram skipped 6 memory files/, "ada's own file is hers to see")
      await mind.maintain()
    } finally {
      await mind.close()
    }
  })

  test('engram status, doctor and mcp run as processes, list the files, and never hang', async () => {
    const env = { ...tmp.env, ENGRAM_HOME: tmp.home }
    const status = await run(process.execPath, [bin, 'status', '--json'], { env, cwd: root, timeout: CHILD_TIMEOUT_MS })
    assertReported((JSON.parse(status.stdout) as { data: { problems: Array<{ file: string; line: number; reason: string }> } }).data.problems, 'engram status')
    const human = await run(process.execPath, [bin, 'status', '--human'], { env, cwd: root, timeout: CHILD_TIMEOUT_MS })
    assert.match(human.stdout, /agents\/default\/knowledge\/pipe\.md {2}a named pipe, not a file/)
    const doctor = await run(process.execPath, [bin, 'doctor', '--json'], { env, cwd: root, timeout: CHILD_TIMEOUT_MS }).catch((error: { stdout: string }) => error)
    const check = (JSON.parse(doctor.stdout) as { data: { checks: Array<{ name: string; status: string; detail: string; fix?: string }> } }).data.checks.find((entry) => entry.name === 'memory files')
    assert.equal(check?.status, 'warn', JSON.stringify(check))
    assert.match(check?.detail ?? '', /skipped and kept as they are/)
    assert.match(check?.fix ?? '', /ENGRAM_MEMORY_MAX_FILE_BYTES/)

    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', tmp.home], env: tmp.env, cwd: root, stderr: 'pipe' })
    const client = new Client({ name: 'open-test', version: '1.0.0' })
    const watchdog = setTimeout(() => void transport.close(), CHILD_TIMEOUT_MS)
    try {
      await client.connect(transport)
      const primed = await client.getPrompt({ name: 'primed_context', arguments: { message: 'How do I make green tea?' } })
      assert.match(JSON.stringify(primed.messages), /warm the cup first/)
    } finally {
      clearTimeout(watchdog)
      await client.close()
    }
  })

  test('every valid entry survives a later write, and every unreadable line is kept byte for byte', async () => {
    const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true })
    try {
      const store = mind.backend.engrams('global')
      assert.ok(store)
      await store.encodeRule({ text: 'Always use filtered water', kind: 'always', meta: {} })
      await store.encodeLesson({ text: 'Rinse the leaves once', kind: 'lesson', meta: {} })
      const rules = readFileSync(agent('memory/rules.md'), 'utf8')
      assert.deepEqual(entriesOf(parseMemoryFile(rules, 'rules')).map((entry) => entry.text), ['Always warm the cup first', 'Always use filtered water', 'Never use boiling water'])
      assert.ok(!rules.includes('\n'), 'still a file of bare carriage returns')
      const lessons = readFileSync(agent('memory/lessons.md'), 'utf8')
      assert.ok(lessons.startsWith(LESSONS), 'the old lines, the one with ts:yesterday included, are all still there')
      assert.deepEqual(entriesOf(parseMemoryFile(lessons, 'lessons')).map((entry) => entry.text), ['Brew green tea at 80 degrees', 'x', 'Steep it for two minutes', 'Rinse the leaves once'])
      assert.equal(readFileSync(agent('knowledge/bomb.md'), 'utf8'), aliasBomb(), 'the bomb is kept as it is')
    } finally {
      await mind.close()
    }
  })

  test('write_memory_file refuses what engram could not read, and writes nothing', async () => {
    const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, settings: { 'memory.maxFileBytes': 4096 } })
    try {
      const tools = mind.agentTools({ sessionId: 'chat-2' })
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ path: 'knowledge/bomb2.md', content: aliasBomb() }, /frontmatter cannot be read: Excessive alias count/],
        [{ path: 'knowledge/bad-yaml.md', content: '---\nkey: [unclosed\n---\nbody\n' }, /frontmatter is not valid YAML/],
        [{ path: 'knowledge/big.md', content: 'x'.repeat(5000) }, /more than memory\.maxFileBytes \(4096\)/],
        [{ path: 'knowledge/pipe.md', content: 'over a pipe' }, /not a folder|regular files|There is no memory file/],
        [{ path: 'knowledge/bomb.md', content: aliasBomb(), mode: 'append' }, /frontmatter cannot be read/],
      ]
      for (const [input, reason] of cases) {
        const result = await call(tools, 'write_memory_file', input)
        assert.equal(result.isError, true, JSON.stringify(input).slice(0, 80))
        assert.match(result.text, reason)
      }
      for (const name of ['bomb2.md', 'bad-yaml.md', 'big.md']) assert.equal(existsSync(agent(`knowledge/${name}`)), false, name)
      assert.equal(readFileSync(agent('knowledge/bomb.md'), 'utf8'), aliasBomb())
      const fine = await call(tools, 'write_memory_file', { path: 'knowledge/ok.md', content: '---\ndescription: a fine note\n---\n# Fine\n' })
      assert.equal(fine.isError, undefined, fine.text)
      // Control characters (other than NUL, refused) are written as spaces, and the answer says so.
      const control = await call(tools, 'write_memory_file', { path: 'knowledge/control.md', content: 'bell \u0007 here\u000bthere \u001b[1mbold\n' })
      assert.equal(control.isError, undefined, control.text)
      assert.match(control.text, /3 control characters were written as spaces/)
      assert.match(readFileSync(agent('knowledge/control.md'), 'utf8'), /\nbell {3}here there {2}\[1mbold\n$/)
      const nul = await call(tools, 'write_memory_file', { path: 'knowledge/nul.md', content: 'a\u0000b' })
      assert.equal(nul.isError, true)
      assert.match(nul.text, /NUL/)
      assert.equal(existsSync(agent('knowledge/nul.md')), false)
    } finally {
      await mind.close()
    }
  })
})
