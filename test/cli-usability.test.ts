/**
 * The command line as a person meets it (issue 30, decision 0074): the closest command, subcommand,
 * option or value for a typo; a usage line and a runnable example in every command's help; fixes
 * in the command line's own words, never an agent tool's; "not found" as an exit code; no home
 * made by a command that only reads; a plain `--version`; colour only on a terminal, never with
 * NO_COLOR. Through `runCli` in-process, and the real binary where the process matters (a pipe).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { COMMANDS } from '../src/interfaces/cli/commands/index.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
/** Names only the agent has: a person at the command line cannot call them. */
const TOOL_NAMES = /search_memory|read_memory_file|profile_get|forget_memory|\bmemorize\b|getAll/

interface Run {
  code: number
  out: string
  err: string
  // biome-ignore lint/suspicious/noExplicitAny: the envelope's data has each command's shape.
  envelope: { ok: boolean; command: string; data?: any; error?: { code: string; message: string; fix?: string } }
}

async function cli(args: string[], options: { env?: Record<string, string>; isTTY?: boolean } = {}): Promise<Run> {
  let out = ''
  let err = ''
  const code = await runCli(args, {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    env: options.env ?? {},
    cwd: root,
    isTTY: options.isTTY ?? false,
  })
  let envelope: Run['envelope'] = { ok: false, command: '' }
  try {
    envelope = JSON.parse(out.trim().split('\n').pop() ?? '')
  } catch {}
  return { code, out, err, envelope }
}

/** A command line as a shell splits it (double or single quotes hold spaces). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? (match[3] as string))
}

describe('did you mean', () => {
  test('a mistyped command, subcommand or option: exit 2, the closest one named', async () => {
    const command = await cli(['serach', 'tea', '--human'])
    assert.equal(command.code, 2)
    assert.match(command.err, /^engram: Unknown command 'serach'\. Did you mean 'search'\?\nFix: run `engram --help`/)

    assert.equal((await cli(['memoris', 'add', 'Ada sails'])).envelope.error?.message, "Unknown command 'memoris'. Did you mean 'memories add'?")
    const sub = await cli(['memories', 'ad', 'Ada sails', '--json'])
    assert.equal(sub.code, 2)
    assert.equal(sub.envelope.error?.code, 'usage')
    assert.equal(sub.envelope.error?.message, "Unknown command 'memories ad'. Did you mean 'memories add'?")
    // A group's own command (`engram skills` lists) does not swallow a mistyped subcommand.
    assert.match((await cli(['skills', 'lst'])).envelope.error?.message ?? '', /Did you mean 'skills list'\?/)
    assert.match((await cli(['memories', '--json'])).envelope.error?.message ?? '', /engram memories needs a subcommand: add, search, list/)

    const flag = await cli(['search', 'tea', '--limt', '3', '--human'])
    assert.equal(flag.code, 2)
    assert.match(flag.err, /^engram search: Unknown option '--limt'\. Did you mean '--limit'\?\nFix: write --limit N/)
    assert.ok(!flag.err.includes('To specify a positional argument'), "Node's own parseArgs wording is not shown")
    const value = await cli(['search', 'tea', '--limit'])
    assert.equal(value.envelope.error?.message, '--limit needs a value.')

    const nothing = await cli(['frobnicate'])
    assert.equal(nothing.envelope.error?.message, "Unknown command 'frobnicate'.", 'nothing close: no guess')
  })

  test('a value an option does not take: every value it takes, and the closest', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    assert.equal((await cli(['init', '--home', tmp.home], { env: tmp.env })).code, 0)
    const rule = await cli(['remember', 'Use metric units', '--kind', 'rule', '--home', tmp.home], { env: tmp.env })
    assert.equal(rule.code, 3)
    assert.equal(rule.envelope.error?.message, '--kind must be one of: always, never, when, lesson, profile (not "rule").')
    assert.equal(rule.envelope.error?.fix, '"rule" is not one kind but 3: did you mean --kind always, never or when?')
    const typo = await cli(['memories', 'add', 'Ada sails', '--kind', 'lesso', '--home', tmp.home], { env: tmp.env })
    assert.equal(typo.envelope.error?.fix, 'did you mean --kind lesson?')
    const kinds = await cli(['search', 'tea', '--kinds', 'lesson,rulse', '--home', tmp.home], { env: tmp.env })
    assert.match(kinds.envelope.error?.message ?? '', /^--kinds must be one of: .*\(not "rulse"\)\.$/)
    assert.equal(kinds.envelope.error?.fix, 'did you mean --kinds rule?')
  })
})

describe('help', () => {
  test('every command: one usage line per form with "engram" once, and examples that parse as that command', async () => {
    for (const entry of COMMANDS) {
      const name = entry.path.join(' ')
      const help = await cli([...entry.path, '--help'])
      assert.equal(help.code, 0, name)
      const usage = help.out.split('\n\n')[0] as string
      for (const line of usage.split('\n')) {
        const text = line.replace(/^(Usage:)?\s+|^Usage: /, '')
        assert.ok(text.startsWith(`engram ${name}`), `${name}: usage line "${line}"`)
        // The program's name once: not "engram engram remember" (`import engram DIR` names a format).
        assert.doesNotMatch(text.slice(`engram ${name}`.length), /(^|\s)engram(\s|$)/, `${name}: "engram" once in "${line}"`)
      }
      const examples = /\nExamples:\n((?: {2}.+\n)+)/.exec(help.out)?.[1]?.trimEnd().split('\n').map((line) => line.trim()) ?? []
      assert.ok(examples.length > 0, `${name} --help shows an example`)
      for (const example of examples) {
        const argv = words(example)
        assert.equal(argv[0], 'engram', example)
        // The example selects this command and every option in it is one the command takes.
        const parsed = await cli([...argv.slice(1), '--help'])
        assert.equal(parsed.code, 0, `${example}: ${parsed.out}${parsed.err}`)
        assert.ok(parsed.out.startsWith(`Usage: engram ${name}`), `${example} runs ${name}`)
      }
    }
  })

  test('a group lists its commands', async () => {
    const group = await cli(['memories', '--help'])
    assert.equal(group.code, 0)
    assert.match(group.out, /\n {2}memories add +Add memories/)
    assert.ok(!group.out.includes('\n  status '))
  })
})

describe('errors a person at the command line can act on', () => {
  let tmp: TempHome
  before(async () => {
    tmp = makeTempHome()
    assert.equal((await cli(['remember', 'Use tabs in Makefiles', '--kind', 'never', '--home', tmp.home], { env: tmp.env })).code, 0)
  })
  after(() => tmp.cleanup())
  const run = (args: string[]) => cli([...args, '--home', tmp.home], { env: tmp.env })

  test('forgetting what is not there names `engram search`, never a tool', async () => {
    const byText = await run(['forget', 'Use spaces everywhere'])
    assert.equal(byText.code, 3)
    assert.equal(byText.envelope.error?.code, 'not_found')
    assert.match(byText.envelope.error?.fix ?? '', /^find it with `engram search "Use spaces everywhere"`/)
    const whole = await run(['forget', 'memory/rules.md'])
    assert.match(whole.envelope.error?.fix ?? '', /`engram search/)
    const entry = await run(['forget', 'memory/rules.md#0123456789abcdef'])
    assert.match(entry.envelope.error?.fix ?? '', /`engram search/)
    const fact = await run(['forget', 'users/ada.md#likes tea', '--user', 'ada'])
    assert.match(fact.envelope.error?.fix ?? '', /`engram memories list --kind profile --user ada`/)
    const id = await run(['memories', 'get', 'mem_nope'])
    assert.match(id.envelope.error?.fix ?? '', /`engram memories list` or `engram memories search`/)
    for (const refusal of [byText, whole, entry, fact, id]) assert.doesNotMatch(`${refusal.envelope.error?.message} ${refusal.envelope.error?.fix}`, TOOL_NAMES)
    // The search a person runs says how a person opens what it found.
    const human = await cli(['search', 'tabs', '--home', tmp.home, '--human'], { env: tmp.env })
    assert.match(human.out, /source: memory\/rules\.md#[0-9a-f]{16} \(open with .*agents\/default\/memory\/rules\.md\)/)
    assert.doesNotMatch(human.out, TOOL_NAMES)
  })

  test('"not found" is exit 3 with the error, for every read by name', async () => {
    const cases = [
      ['history', 'knowledge/nope.md'],
      ['memories', 'get', 'mem_bm9wZQ'],
      ['memories', 'history', 'mem_bm9wZQ'],
      ['skills', 'show', 'nope'],
      ['restore', 'knowledge/nope.md'],
      ['context', 'describe', 'sum_nope'],
      ['context', 'stats', '--session', 'nope'],
    ]
    for (const args of cases) {
      const result = await run(args)
      assert.equal(result.code, 3, `${args.join(' ')}: ${result.out}`)
      assert.equal(result.envelope.ok, false, args.join(' '))
      assert.equal(result.envelope.error?.code, 'not_found', args.join(' '))
    }
    const history = await cli(['history', 'knowledge/nope.md', '--home', tmp.home, '--human'], { env: tmp.env })
    assert.match(history.err, /^engram history: There is no document knowledge\/nope\.md/)
  })
})

describe('no home is created by a command that does not create one', () => {
  let tmp: TempHome
  before(() => {
    tmp = makeTempHome()
  })
  after(() => tmp.cleanup())

  test('every such command refuses with how to make a home, and makes nothing', async () => {
    const missing = join(tmp.home, 'typo', 'x')
    const needing = COMMANDS.filter((entry) => !['init', 'remember', 'memories add', 'import', 'mcp', 'serve', 'eval retrieval', 'skills save', 'context append', 'doctor'].includes(entry.path.join(' ')))
    assert.ok(needing.length > 25)
    for (const entry of needing) {
      const result = await cli([...entry.path, '--home', missing], { env: tmp.env })
      const name = entry.path.join(' ')
      assert.equal(result.code, 3, `${name}: ${result.out}`)
      assert.equal(result.envelope.error?.code, 'not_found', name)
      assert.match(result.envelope.error?.message ?? '', new RegExp(`^There is no engram home at ${missing.replaceAll('/', '\\/')} \\(from --home\\); nothing was created\\.$`), name)
      assert.match(result.envelope.error?.fix ?? '', /^create one with `engram init --home /, name)
      assert.ok(!existsSync(join(tmp.home, 'typo')), `${name} created ${missing}`)
    }
    // The doctor says it as a failed check; the home in ENGRAM_HOME is checked the same.
    const doctor = await cli(['doctor'], { env: { ...tmp.env, ENGRAM_HOME: missing } })
    assert.equal(doctor.code, 5)
    const check = (doctor.envelope.data.checks as Array<{ name: string; status: string; detail: string }>).find((c) => c.name === 'home')
    assert.equal(check?.status, 'fail')
    assert.match(check?.detail ?? '', /no engram home at .* \(from ENGRAM_HOME\)/)
    assert.ok(!existsSync(join(tmp.home, 'typo')))
    // A command that adds memory still makes its home, and then the others read it.
    assert.equal((await cli(['remember', 'Use metric units', '--kind', 'always', '--home', missing], { env: tmp.env })).code, 0)
    const status = await cli(['status', '--home', missing], { env: tmp.env })
    assert.equal(status.code, 0, status.out)
    assert.equal((await cli(['config', '--docs', '--home', join(tmp.home, 'elsewhere')], { env: tmp.env })).code, 0, 'the settings reference needs no home')
  })
})

describe('output', () => {
  const run = promisify(execFile)

  test('--version is plain text on a pipe; JSON only when --json asks', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
    const plain = await run(process.execPath, [bin, '--version'], { env: tmp.env })
    assert.equal(plain.stdout, `engram ${version}\n`)
    const json = await run(process.execPath, [bin, '--version', '--json'], { env: tmp.env })
    assert.deepEqual(JSON.parse(json.stdout), { ok: true, command: 'version', data: { version } })
  })

  test('colour on a terminal only, and never with NO_COLOR', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    mkdirSync(tmp.home, { recursive: true })
    const args = ['config', '--home', tmp.home, '--human']
    const ansi = '\u001b['
    const terminal = await cli(args, { env: tmp.env, isTTY: true })
    assert.equal(terminal.code, 0)
    assert.ok(terminal.out.startsWith(`${ansi}1mengram configuration`), 'bold on a terminal')
    for (const env of [{ NO_COLOR: '1' }, { NODE_DISABLE_COLORS: '1' }, { TERM: 'dumb' }] as Array<Record<string, string>>) {
      const plain = await cli(args, { env: { ...tmp.env, ...env }, isTTY: true })
      assert.ok(!plain.out.includes(ansi), JSON.stringify(env))
    }
    assert.ok(!(await cli(args, { env: tmp.env, isTTY: false })).out.includes(ansi), 'a pipe gets no colour')
    assert.ok((await cli(args, { env: { ...tmp.env, NO_COLOR: '' }, isTTY: true })).out.includes(ansi), 'an empty NO_COLOR is unset (no-color.org)')
  })
})
