/** The text of `engram --help` and `engram <command> --help`. */
import type { Command, OptionSpec } from './command.ts'
import type { CommandEntry } from './commands/index.ts'
import { GLOBAL_OPTIONS } from './global-options.ts'
import { ENGRAM_VERSION } from './version.ts'

function optionLines(specs: Record<string, OptionSpec>): string {
  return Object.entries(specs)
    .map(([key, spec]) => {
      const flag = `--${key}${spec.type === 'string' ? ` ${spec.valueName ?? 'VALUE'}` : ''}`
      return `  ${flag.padEnd(24)} ${spec.description}`
    })
    .join('\n')
}

/** `engram --help`: every command with its summary, and the global options. */
export function helpText(commands: readonly CommandEntry[]): string {
  const lines = commands.map((c) => `  ${c.path.join(' ').padEnd(24)} ${c.summary}`)
  return `engram ${ENGRAM_VERSION} — long-term memory for LLM agents

Usage: engram [--home DIR] [--agent NAME] [--json] <command> [options]

Commands:
${lines.join('\n')}

Global options:
${optionLines(GLOBAL_OPTIONS)}

Run \`engram <command> --help\` for a command's options and examples.
`
}

/**
 * The usage lines of a command: `engram`, its words, then each form of its usage. The command
 * writes only what follows its words, so the program's name is printed once (it used to be
 * written into some usages and printed twice: "engram engram remember").
 */
export function usageLines(command: Pick<Command, 'path' | 'usage'>): string[] {
  const forms = command.usage === undefined ? [''] : typeof command.usage === 'string' ? [command.usage] : [...command.usage]
  return forms.map((form) => `engram ${command.path.join(' ')}${form === '' ? '' : ` ${form}`}`)
}

/** `engram <command> --help`: its usage, summary, options, examples and the global options. */
export function commandHelp(entry: CommandEntry, command: Command): string {
  const [first, ...others] = usageLines(command)
  const usage = [`Usage: ${first}`, ...others.map((line) => `       ${line}`)].join('\n')
  return `${usage}

${entry.summary}
${command.options ? `\nOptions:\n${optionLines(command.options)}\n` : ''}
Examples:
${command.examples.map((example) => `  ${example}`).join('\n')}

Global options:
${optionLines(GLOBAL_OPTIONS)}
`
}
