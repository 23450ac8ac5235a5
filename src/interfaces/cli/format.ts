/** Small helpers for human-readable CLI output. Colour only on a terminal, never with NO_COLOR. */
import { styleText } from 'node:util'
import type { CliIo } from './io.ts'

export interface Style {
  bold(text: string): string
  dim(text: string): string
  green(text: string): string
  yellow(text: string): string
  red(text: string): string
}

/**
 * Whether the command's output may be coloured: stdout is a terminal, NO_COLOR (no-color.org) and
 * NODE_DISABLE_COLORS are unset or empty, and TERM is not `dumb`. Decided from the run's own
 * environment and terminal (`io`), not the process's: styleText's stream check reads
 * `process.env` and `process.stdout`, which a CLI run in-process (tests, an embedding program)
 * does not own — and before Node 22.14 it skipped formats given as an array.
 */
export function colourFor(io: Pick<CliIo, 'isTTY' | 'env'>): boolean {
  const set = (name: string) => (io.env[name] ?? '') !== ''
  return io.isTTY && !set('NO_COLOR') && !set('NODE_DISABLE_COLORS') && io.env.TERM !== 'dumb'
}

/** Styles through `node:util` `styleText`, or plain text when `enabled` is false (see `colourFor`). */
export function makeStyle(enabled: boolean): Style {
  const wrap = (format: 'bold' | 'dim' | 'green' | 'yellow' | 'red') => (text: string) => (enabled ? styleText(format, text, { validateStream: false }) : text)
  return { bold: wrap('bold'), dim: wrap('dim'), green: wrap('green'), yellow: wrap('yellow'), red: wrap('red') }
}

/** Two aligned columns. */
export function table(rows: Array<[string, string]>, indent = '  '): string {
  const width = Math.max(0, ...rows.map(([left]) => left.length))
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`).join('\n')
}
