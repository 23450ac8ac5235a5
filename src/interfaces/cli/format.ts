/** Small helpers for human-readable CLI output. Colour only on a terminal. */
export interface Style {
  bold(text: string): string
  dim(text: string): string
  green(text: string): string
  yellow(text: string): string
  red(text: string): string
}

export function makeStyle(enabled: boolean): Style {
  const wrap = (code: number, reset: number) => (text: string) => (enabled ? `\u001b[${code}m${text}\u001b[${reset}m` : text)
  return { bold: wrap(1, 22), dim: wrap(2, 22), green: wrap(32, 39), yellow: wrap(33, 39), red: wrap(31, 39) }
}

/** Two aligned columns. */
export function table(rows: Array<[string, string]>, indent = '  '): string {
  const width = Math.max(0, ...rows.map(([left]) => left.length))
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`).join('\n')
}
