/**
 * Every type a public signature names is importable from the package root (issue 29). The
 * compiler shipped here (TypeScript 7) has no JavaScript API, so this reads the sources: for each
 * interface, class, function and object type exported from src/index.ts, the type names in its
 * declaration (members, parameters, results, `extends`; not a function's body, not a class's
 * private members, not a union alias's own building blocks) that are exported types of src/ must
 * be root exports too — followed transitively. The second test is the type-level check: it
 * compiles only while the types are importable from the root.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import type { ConfirmOutcome, MemoryRecord, Owner, TurnRef, Viewer } from '../src/index.ts'

const src = resolve(import.meta.dirname, '../src')

interface Declaration {
  file: string
  kind: string
  text: string
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return ['test-support', 'contract-tests', 'fixtures'].includes(entry.name) ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })
}

/** The declaration's text from `start`: a braced body for interfaces and classes, the signature for functions, the statement for types. */
function declarationText(source: string, start: number, kind: string): string {
  if (kind === 'type') {
    const ends = [source.indexOf('\nexport', start + 1), source.indexOf('\n\n', start + 1)].filter((at) => at > 0)
    return source.slice(start, ends.length > 0 ? Math.min(...ends) : source.length)
  }
  let depth = 0
  let parens = 0
  for (let at = start; at < source.length; at++) {
    const char = source[at]
    if (char === '(') parens++
    else if (char === ')') parens--
    else if (char === '{') {
      // A function's body starts at the first brace outside its parameters that ends a line.
      if (kind === 'function' && parens === 0 && source[at + 1] === '\n') return source.slice(start, at)
      depth++
    } else if (char === '}') {
      depth--
      if (depth === 0 && kind !== 'function') return source.slice(start, at + 1)
    }
  }
  return source.slice(start)
}

function unexportedTypes(): string[] {
  const declarations = new Map<string, Declaration[]>()
  for (const file of sourceFiles(src)) {
    const source = readFileSync(file, 'utf8')
    for (const match of source.matchAll(/^export (?:declare )?(interface|type|class|(?:async )?function|const) ([A-Za-z0-9_]+)/gm)) {
      const kind = (match[1] as string).replace('async ', '')
      const text = declarationText(source, match.index, kind)
        .replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '')
        .replace(/^\s*private [^\n]*$/gm, '')
      const name = match[2] as string
      declarations.set(name, [...(declarations.get(name) ?? []), { file, kind, text }])
    }
  }
  const index = readFileSync(join(src, 'index.ts'), 'utf8')
  const exported = new Set([...index.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap((match) => (match[1] as string).split(',').map((name) => name.trim())))
  const isType = (name: string): boolean => (declarations.get(name) ?? []).some((d) => d.kind !== 'const' && d.kind !== 'function')
  const missing = new Map<string, Set<string>>()
  const queue = [...exported].filter((name) => declarations.has(name))
  const seen = new Set<string>()
  while (queue.length > 0) {
    const name = queue.pop() as string
    if (seen.has(name)) continue
    seen.add(name)
    for (const declaration of declarations.get(name) ?? []) {
      if (declaration.kind === 'const') continue
      // A union or alias of other types is read as its name; an object type is read member by member.
      if (declaration.kind === 'type' && !/=\s*(?:\{|[A-Za-z<>, ]+&)/.test(declaration.text)) continue
      for (const [used] of declaration.text.matchAll(/\b[A-Z][A-Za-z0-9]+\b/g)) {
        if (used === name || !isType(used)) continue
        if (exported.has(used)) queue.push(used)
        else missing.set(used, (missing.get(used) ?? new Set()).add(name))
      }
    }
  }
  return [...missing].map(([name, users]) => `${name} (used by ${[...users].sort().join(', ')})`).sort()
}

test('every type a public signature names is exported from the package root', () => {
  assert.deepEqual(unexportedTypes(), [])
})

test('the types issue 29 found missing are importable from the root', () => {
  const owner: Owner = 'user:ada'
  const viewer: Viewer = { agent: 'default', user: 'ada' }
  const ref: TurnRef = { sessionId: 's', number: 1, messageId: 3 }
  const outcome: ConfirmOutcome = { saved: 0, rejected: 0, accepted: [], problems: [] }
  const record: Pick<MemoryRecord, 'owner'> = { owner }
  assert.deepEqual([record.owner, viewer.user, ref.number, outcome.saved], ['user:ada', 'ada', 1, 0])
})
