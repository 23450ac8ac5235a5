/**
 * The `engram` command: a thin shell over the library. `runCli(argv, io)` returns an exit code and
 * never calls `process.exit`, so tests drive it in-process and `bin.ts` drives it for real.
 *
 * Output is a JSON envelope (`{ ok, command, data }` / `{ ok: false, error }`) when `--json` is given
 * or stdout is not a terminal, else human text. Expected errors become exit codes with their fix;
 * unexpected ones say "please report" with the versions.
 */
import { parseArgs } from 'node:util'
import { EngramError, ErrorCode, withFix } from '../../core/errors.ts'
import { unsupportedNodeError } from '../../core/node-version.ts'
import type { Command, CommandContext, OptionSpec } from './command.ts'
import { COMMANDS, type CommandEntry } from './commands/index.ts'
import { mistypedSubcommand, optionProblem, unknownCommand } from './did-you-mean.ts'
import { GLOBAL_OPTIONS } from './global-options.ts'
import { commandHelp, helpText } from './help.ts'
import { type CliIo, ExitCode } from './io.ts'
import { ENGRAM_VERSION } from './version.ts'

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const words = commandWords(argv)
  const entry = findCommand(words)
  const json = argv.includes('--json')
  const wantsJson = json || (!io.isTTY && !argv.includes('--human'))
  // Before anything else, `--version` and `--help` included: on an older Node a command would fail
  // on a built-in it lacks, with a message about that built-in (decision 0068). Said on stderr in
  // JSON mode too: an MCP client that launched `engram mcp` shows its server's stderr, not stdout.
  const oldNode = unsupportedNodeError()
  if (oldNode) {
    const name = entry?.path.join(' ') ?? (argv.includes('--version') ? 'version' : words.join(' '))
    if (wantsJson) io.stderr.write(`engram: ${withFix(oldNode.message, oldNode.fix)}\n`)
    return fail(io, wantsJson, name, oldNode.code, oldNode.message, oldNode.fix, ExitCode.system, oldNode.details)
  }

  // A version is read by people and by scripts (`$(engram --version)`): plain text unless --json
  // asks for the envelope, even when stdout is a pipe.
  if (argv.includes('--version')) {
    io.stdout.write(json ? `${JSON.stringify({ ok: true, command: 'version', data: { version: ENGRAM_VERSION } })}\n` : `engram ${ENGRAM_VERSION}\n`)
    return ExitCode.ok
  }
  const wantsHelp = argv.includes('--help') || argv.includes('-h')
  if (!entry) {
    if (words.length === 0) {
      io.stdout.write(helpText(COMMANDS))
      return wantsHelp ? ExitCode.ok : ExitCode.usage
    }
    // `engram memories --help`: the commands of that group.
    const group = COMMANDS.filter((command) => command.path[0] === words[0])
    if (wantsHelp && words.length === 1 && group.length > 0) {
      io.stdout.write(helpText(group))
      return ExitCode.ok
    }
    const unknown = unknownCommand(words, COMMANDS)
    return fail(io, wantsJson, '', ErrorCode.usage, unknown.message, unknown.fix, ExitCode.usage)
  }
  const name = entry.path.join(' ')
  const mistyped = mistypedSubcommand(entry, words[entry.path.length], COMMANDS)
  if (mistyped) return fail(io, wantsJson, '', ErrorCode.usage, mistyped.message, mistyped.fix, ExitCode.usage)
  // Only now is the command's module loaded, and what it imports (decision 0041).
  let command: Command
  try {
    command = await entry.load()
  } catch (error) {
    return unexpected(io, wantsJson, name, error)
  }

  const specs: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, ...command.options }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args: argv, options: stripDescriptions(specs), allowPositionals: true, strict: true })
  } catch (error) {
    const problem = optionProblem(error, name, specs)
    return fail(io, wantsJson, name, ErrorCode.usage, problem.message, problem.fix, ExitCode.usage)
  }
  const options = parsed.values as CommandContext['options']
  if (options.help) {
    io.stdout.write(commandHelp(entry, command))
    return ExitCode.ok
  }

  const settings: Record<string, unknown> = {}
  for (const key of ['home', 'agent', 'project'] as const) if (typeof options[key] === 'string') settings[key] = options[key]
  for (const pair of (options.set as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=')
    if (eq <= 0) return fail(io, wantsJson, name, 'usage', `--set expects KEY=VALUE, got "${pair}"`, 'write e.g. --set memory.mode=copilot', ExitCode.usage)
    settings[pair.slice(0, eq)] = pair.slice(eq + 1)
  }

  try {
    // Loaded here, not at the top: `--help` and `--version` need no configuration (decision 0041).
    const noHome = command.home === undefined ? (await import('./home-check.ts')).missingHome(io, settings) : undefined
    if (noHome) throw noHome
    const result = await command.run({
      io,
      args: parsed.positionals.slice(command.path.length),
      options,
      json: wantsJson,
      settings,
    })
    const exitCode = result.exitCode ?? ExitCode.ok
    if (result.quiet) return exitCode
    if (wantsJson) io.stdout.write(`${JSON.stringify({ ok: exitCode === ExitCode.ok, command: name, data: result.data })}\n`)
    else io.stdout.write(result.human.endsWith('\n') ? result.human : `${result.human}\n`)
    return exitCode
  } catch (error) {
    if (EngramError.is(error)) {
      const exit = error.category === 'user' ? ExitCode.user : ExitCode.system
      return fail(io, wantsJson, name, error.code, error.message, error.cliFix ?? error.fix, exit, error.details)
    }
    return unexpected(io, wantsJson, name, error)
  }
}

function unexpected(io: CliIo, json: boolean, command: string, error: unknown): number {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
  return fail(io, json, command, ErrorCode.internal, `unexpected error: ${detail}`,
    `this is a bug in engram ${ENGRAM_VERSION} (Node ${process.version}); please report it with this output`, ExitCode.internal)
}

function fail(io: CliIo, json: boolean, command: string, code: ErrorCode, message: string, fix: string | undefined, exit: number, details?: Record<string, unknown>): number {
  if (json) {
    io.stdout.write(`${JSON.stringify({ ok: false, command, error: { code, message, fix, ...(details && Object.keys(details).length > 0 ? { details } : {}) } })}\n`)
  } else {
    io.stderr.write(`engram${command ? ` ${command}` : ''}: ${withFix(message, fix)}\n`)
  }
  return exit
}

/**
 * Positionals of the command line, skipping the values of the global options. The command's words
 * come before its own options (`engram search --limit 5 tea`); a command option put before them
 * is not known yet, and its value reads as a word (the strict parse then names the option).
 */
function commandWords(argv: string[]): string[] {
  try {
    return parseArgs({ args: argv, options: stripDescriptions(GLOBAL_OPTIONS), allowPositionals: true, strict: false }).positionals
  } catch {
    return argv.filter((arg) => !arg.startsWith('-'))
  }
}

function findCommand(words: string[]): CommandEntry | undefined {
  let best: CommandEntry | undefined
  for (const command of COMMANDS) {
    const matches = command.path.every((word, i) => words[i] === word)
    if (matches && (!best || command.path.length > best.path.length)) best = command
  }
  return best
}

function stripDescriptions(specs: Record<string, OptionSpec>): NonNullable<Parameters<typeof parseArgs>[0]>['options'] {
  const out: Record<string, unknown> = {}
  for (const [key, { description: _d, valueName: _v, ...rest }] of Object.entries(specs)) out[key] = rest
  return out as NonNullable<Parameters<typeof parseArgs>[0]>['options']
}
