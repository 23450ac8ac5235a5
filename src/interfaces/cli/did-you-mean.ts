/**
 * What the command line says when a word is not one it knows: the closest command, subcommand,
 * option or value, as git and npm do ("Did you mean 'search'?"). Closeness is the similarity the
 * skill labels already use (difflib's ratio, cut off at 0.6), so `serach` finds `search` and
 * `frobnicate` finds nothing.
 */
import { closestLabel } from '../../memory/skills/labels.ts'
import type { OptionSpec } from './command.ts'
import type { CommandEntry } from './commands/index.ts'

/** The candidate closest to `input`, or undefined when none is close enough to suggest. */
export function closest(input: string, candidates: Iterable<string>): string | undefined {
  return closestLabel(input, [...new Set(candidates)])?.label
}

/** `" Did you mean 'x'?"`, or nothing. */
function suggestion(input: string, candidates: Iterable<string>, render: (found: string) => string): string {
  const found = closest(input, candidates)
  return found === undefined ? '' : ` Did you mean '${render(found)}'?`
}

/** A command line whose words select no command: the message and the fix. */
export function unknownCommand(words: readonly string[], commands: readonly CommandEntry[]): { message: string; fix: string } {
  const first = words[0] ?? ''
  const group = commands.filter((entry) => entry.path[0] === first)
  if (group.length === 0) {
    // `memoris add`: the closest first word, with the second when it names one of that group's commands.
    const found = closest(first, commands.map((entry) => entry.path[0] as string))
    const whole = found !== undefined && commands.some((entry) => entry.path[0] === found && entry.path[1] !== undefined && entry.path[1] === words[1]) ? `${found} ${words[1]}` : found
    return {
      message: `Unknown command '${first}'.${whole === undefined ? '' : ` Did you mean '${whole}'?`}`,
      fix: 'run `engram --help` to see the commands',
    }
  }
  // The first word names a group (`memories`, `context`): the next must name one of its commands.
  const subcommands = group.flatMap((entry) => (entry.path.length > 1 ? [entry.path[1] as string] : []))
  const second = words[1]
  if (second === undefined) {
    return { message: `engram ${first} needs a subcommand: ${subcommands.join(', ')}.`, fix: `run e.g. \`engram ${first} ${subcommands[0]} --help\`` }
  }
  return {
    message: `Unknown command '${first} ${second}'.${suggestion(second, subcommands, (found) => `${first} ${found}`)}`,
    fix: `run \`engram ${first} --help\` or \`engram --help\` to see the commands (${first}: ${subcommands.join(', ')})`,
  }
}

/**
 * A word after a command that is also a group (`engram skills lst`): the closest of its
 * subcommands, or undefined when the word is not close to any (then it is the command's argument).
 */
export function mistypedSubcommand(entry: CommandEntry, word: string | undefined, commands: readonly CommandEntry[]): { message: string; fix: string } | undefined {
  if (word === undefined) return undefined
  const depth = entry.path.length
  const subcommands = commands.filter((other) => other.path.length === depth + 1 && entry.path.every((part, i) => other.path[i] === part)).map((other) => other.path[depth] as string)
  if (subcommands.length === 0) return undefined
  const found = closest(word, subcommands)
  if (found === undefined) return undefined
  const name = entry.path.join(' ')
  return { message: `Unknown command '${name} ${word}'. Did you mean '${name} ${found}'?`, fix: `run \`engram ${name} ${found} --help\`` }
}

/**
 * Node's `parseArgs` refusal (`ERR_PARSE_ARGS_*`) said for `engram <command>`: which option, what
 * was wrong with it, and the closest option the command has.
 */
export function optionProblem(error: unknown, command: string, specs: Record<string, OptionSpec>): { message: string; fix: string } {
  const text = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown }).code
  const help = `run \`engram ${command} --help\` to see its options`
  const unknown = /^Unknown option '(-{1,2})([^']*)'/.exec(text)
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
    const [, dashes, name = ''] = unknown
    const found = closest(name, Object.keys(specs))
    return {
      message: `Unknown option '${dashes}${name}'.${found === undefined ? '' : ` Did you mean '--${found}'?`}`,
      fix: found === undefined ? help : `write --${found}${specs[found]?.type === 'string' ? ` ${specs[found]?.valueName ?? 'VALUE'}` : ''}, or ${help}`,
    }
  }
  const missing = /^Option '(?:-\w, )?(--[^ ']+)(?: <value>' argument missing|' argument is ambiguous)/.exec(text)
  if (missing) {
    const flag = missing[1] as string
    const spec = specs[flag.slice(2)]
    return { message: `${flag} needs a value.`, fix: `write ${flag} ${spec?.valueName ?? 'VALUE'} (a value starting with a dash as ${flag}=-VALUE), or ${help}` }
  }
  const noValue = /^Option '(?:-\w, )?(--[^ ']+)' does not take an argument/.exec(text)
  if (noValue) {
    const flag = noValue[1] as string
    return { message: `${flag} takes no value.`, fix: `write ${flag} alone, or ${help}` }
  }
  return { message: text, fix: help }
}
