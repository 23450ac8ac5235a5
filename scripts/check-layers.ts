/**
 * The layer check run by `npm run lint` and `npm test` (decision 0061, DESIGN.md §2): every import
 * of production code under src/ points down the layers, and no memory system imports a concrete
 * backend. A rule that only a reviewer enforces drifts (it had: six upward imports and a cycle
 * between mind.ts and tools/), so this reads every production file's imports — declarations,
 * re-exports, `import()` calls and `import('…')` types; type-only imports count, a type is a
 * dependency too — maps both ends to a layer by folder, and prints one line per broken rule with
 * the file and line.
 *
 * Usage: `node scripts/check-layers.ts [root]` (root: the repository, by default this one); exits
 * 1 when a rule is broken.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The layers from the bottom up; a file may import its own layer and any layer below it. storage
 * and llm sit side by side: neither imports the other. `entries` are the package's entry files
 * (src/index.ts, src/mcp.ts, …) and src/testing/ (the source of `engram/test`), which may import
 * anything.
 */
const LAYERS: ReadonlyArray<readonly string[]> = [['core'], ['config'], ['text'], ['storage', 'llm'], ['memory'], ['tools'], ['mind'], ['eval'], ['interfaces'], ['entries']]

const RANK: ReadonlyMap<string, number> = new Map(LAYERS.flatMap((names, rank) => names.map((name) => [name, rank] as const)))

/** The layers as one line, top first, for the messages. */
const ORDER = LAYERS.map((names) => names.join(' | '))
  .reverse()
  .join(' → ')

/** Folders of src/ whose name is not their layer's. Any other folder must be a layer's name: a new folder is placed on purpose. */
const FOLDER_LAYER: Readonly<Record<string, string>> = { session: 'mind', testing: 'entries' }

/**
 * Files directly in src/ that belong to the mind layer; the rest there are entry files.
 * mind-internals.ts is the internal entry of decision 0062 (the subsystems behind `Mind`).
 */
const MIND_FILES: ReadonlySet<string> = new Set(['mind.ts', 'mind-core.ts', 'mind-internals.ts'])

/** Folders holding test code only (never built into dist/, tsconfig.json): their imports are not checked. */
const TEST_FOLDERS: ReadonlySet<string> = new Set(['test-support', 'contract-tests', 'fixtures'])

/** The concrete backends under storage/: memory systems reach storage through its seams only (DESIGN.md §2). */
const CONCRETE_BACKENDS: readonly string[] = ['storage/files/', 'storage/sqlite/', 'storage/postgres/']

/**
 * memory/ files allowed to import a concrete backend (from → to, relative to src/): none since
 * decision 0059 (the helpers they used live in backend-neutral modules under storage/). The list
 * can only shrink: an entry whose import is gone fails the check, and a new import is never added.
 */
const CONCRETE_BACKEND_ALLOWED: readonly string[] = []

export interface LayerProblem {
  /** `src/…:line`, or the allow-list entry that matches nothing. */
  where: string
  message: string
}

/** The layer of a file, by its path relative to src/ (forward slashes); undefined for a folder that is no layer. */
function layerOf(path: string): string | undefined {
  const parts = path.split('/')
  const top = parts[0] ?? ''
  if (parts.length === 1) return MIND_FILES.has(top) ? 'mind' : 'entries'
  const layer = FOLDER_LAYER[top] ?? top
  return RANK.has(layer) ? layer : undefined
}

/** Whether a file under src/ is production code: built into dist/, so its imports are checked. */
function isProduction(path: string): boolean {
  if (!path.endsWith('.ts') || path.endsWith('.test.ts') || path.endsWith('.d.ts')) return false
  // Test helpers and child scripts live in test-support/ folders (decision 0064); src/testing/ is the engram/test entry.
  return !path.split('/').slice(0, -1).some((folder) => TEST_FOLDERS.has(folder))
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(path) : [path]
  })
}

interface ImportSite {
  specifier: string
  line: number
}

type Token = { kind: 'word' | 'punct'; text: string; at: number } | { kind: 'string'; text: string; at: number }

/** Words after which a `/` starts a regular expression rather than a division. */
const BEFORE_EXPRESSION: ReadonlySet<string> = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await', 'instanceof'])

/**
 * The tokens of a TypeScript file that matter for its imports: words, punctuation and string
 * literals, with comments, template text and regular expressions skipped. (TypeScript 7, the
 * project's compiler, has no JavaScript API to parse with, and a regular expression over the raw
 * text would read imports quoted in comments and strings.)
 */
function tokensOf(text: string): Token[] {
  const tokens: Token[] = []
  const templateDepths: number[] = [] // brace depth at which each open `${` returns to its template
  let depth = 0
  let i = 0
  const skipTemplate = (): void => {
    // From inside a template's text to its end (`) or to an interpolation (${).
    while (i < text.length) {
      const c = text[i]
      if (c === '\\') i += 2
      else if (c === '`') {
        i++
        return
      } else if (c === '$' && text[i + 1] === '{') {
        i += 2
        templateDepths.push(depth)
        depth++
        return
      } else i++
    }
  }
  while (i < text.length) {
    const c = text[i] ?? ''
    const next = text[i + 1]
    if (/\s/.test(c)) i++
    else if (c === '/' && next === '/') i = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i)
    else if (c === '/' && next === '*') i = text.indexOf('*/', i + 2) === -1 ? text.length : text.indexOf('*/', i + 2) + 2
    else if (c === "'" || c === '"') {
      const at = i
      let value = ''
      i++
      while (i < text.length && text[i] !== c && text[i] !== '\n') {
        if (text[i] === '\\') {
          value += text[i + 1] ?? ''
          i += 2
        } else value += text[i++]
      }
      i++
      tokens.push({ kind: 'string', text: value, at })
    } else if (c === '`') {
      i++
      skipTemplate()
      tokens.push({ kind: 'string', text: '', at: i })
    } else if (/[\p{L}_$\d]/u.test(c)) {
      const at = i
      while (i < text.length && /[\p{L}\p{N}_$]/u.test(text[i] ?? '')) i++
      tokens.push({ kind: 'word', text: text.slice(at, i), at })
    } else if (c === '/') {
      const last = tokens.at(-1)
      const endsExpression = last !== undefined && (last.kind === 'string' || (last.kind === 'word' && !BEFORE_EXPRESSION.has(last.text)) || [')', ']', '}'].includes(last.text))
      if (endsExpression) tokens.push({ kind: 'punct', text: c, at: i++ })
      else {
        // A regular expression literal: to its closing slash, outside any [class].
        let inClass = false
        i++
        while (i < text.length && text[i] !== '\n') {
          const r = text[i]
          if (r === '\\') i++
          else if (r === '[') inClass = true
          else if (r === ']') inClass = false
          else if (r === '/' && !inClass) break
          i++
        }
        i++
        tokens.push({ kind: 'string', text: '', at: i })
      }
    } else {
      if (c === '{') depth++
      else if (c === '}') {
        depth--
        if (templateDepths.at(-1) === depth) {
          templateDepths.pop()
          i++
          skipTemplate()
          continue
        }
      }
      tokens.push({ kind: 'punct', text: c, at: i++ })
    }
  }
  return tokens
}

/** Tokens that may stand between `import`/`export` and `from`: names, braces, commas, `*`, `type`, `as`. */
function isClauseToken(token: Token): boolean {
  return token.kind === 'word' || (token.kind === 'punct' && ['{', '}', ',', '*'].includes(token.text))
}

/** Every module a file names: import and export declarations, `import()` calls and `import('…')` types. */
function importsOf(text: string): ImportSite[] {
  const tokens = tokensOf(text)
  const lineStarts = [0]
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1)
  const lineOf = (at: number): number => {
    let line = 0
    while (line + 1 < lineStarts.length && (lineStarts[line + 1] ?? 0) <= at) line++
    return line + 1
  }
  const sites: ImportSite[] = []
  tokens.forEach((token, t) => {
    if (token.kind !== 'word' || (token.text !== 'import' && token.text !== 'export')) return
    if (tokens[t - 1]?.text === '.') return // import.meta or a property named so
    const next = tokens[t + 1]
    if (token.text === 'import' && next?.kind === 'string') sites.push({ specifier: next.text, line: lineOf(token.at) })
    else if (token.text === 'import' && next?.text === '(') {
      const argument = tokens[t + 2]
      if (argument?.kind === 'string' && argument.text !== '') sites.push({ specifier: argument.text, line: lineOf(token.at) })
    } else {
      // import … from '…' / export … from '…': only names, braces, commas, * and `as` come before `from`.
      for (let u = t + 1; u < tokens.length; u++) {
        const clause = tokens[u] as Token
        if (clause.kind === 'word' && clause.text === 'from' && tokens[u + 1]?.kind === 'string') {
          sites.push({ specifier: (tokens[u + 1] as Token).text, line: lineOf(token.at) })
          break
        }
        if (!isClauseToken(clause) || (clause.text === '}' && tokens[u + 1]?.text !== 'from')) break
        // `export interface X { … }`, `export const x`, `export function f`: a declaration, not a re-export.
        if (clause.kind === 'word' && clause.text !== 'type' && clause.text !== 'as' && tokens[u + 1]?.kind === 'word' && tokens[u + 1]?.text !== 'from' && tokens[u + 1]?.text !== 'as') break
      }
    }
  })
  return sites
}

/** The broken rules of the production files under `root`/src (none: the layers hold). */
export function checkLayers(root: string): LayerProblem[] {
  const src = join(root, 'src')
  const problems: LayerProblem[] = []
  const allowedSeen = new Set<string>()
  const files = filesUnder(src)
    .map((file) => relative(src, file).split(sep).join('/'))
    .filter(isProduction)
    .sort()
  for (const from of files) {
    const fromLayer = layerOf(from)
    if (fromLayer === undefined) {
      problems.push({ where: `src/${from}`, message: `src/${from.split('/')[0]}/ is in no layer: add it to LAYERS or FOLDER_LAYER in scripts/check-layers.ts (${ORDER})` })
      continue
    }
    const fromRank = RANK.get(fromLayer) ?? 0
    for (const { specifier, line } of importsOf(readFileSync(join(src, from), 'utf8'))) {
      if (!specifier.startsWith('./') && !specifier.startsWith('../')) continue // a package
      const where = `src/${from}:${line}`
      const target = relative(src, resolve(dirname(join(src, from)), specifier)).split(sep).join('/')
      if (target.startsWith('../')) {
        problems.push({ where, message: `imports ${specifier}, outside src/: production code is built from src/ alone` })
        continue
      }
      const toLayer = layerOf(target)
      if (toLayer === undefined) continue // reported for the file itself, as a folder in no layer
      const toRank = RANK.get(toLayer) ?? 0
      if (toRank > fromRank) {
        problems.push({ where, message: `${fromLayer} → ${toLayer} (${target}): an import runs up the layers; dependencies point down only: ${ORDER} (DESIGN.md §2)` })
      } else if (toRank === fromRank && toLayer !== fromLayer) {
        problems.push({ where, message: `${fromLayer} → ${toLayer} (${target}): ${fromLayer} and ${toLayer} sit side by side, and neither imports the other (DESIGN.md §2)` })
      } else if (fromLayer === 'memory' && CONCRETE_BACKENDS.some((backend) => target.startsWith(backend))) {
        const pair = `${from} → ${target}`
        if (CONCRETE_BACKEND_ALLOWED.includes(pair)) allowedSeen.add(pair)
        else problems.push({ where, message: `memory → ${target}: a memory system never imports a concrete backend (storage/files, sqlite, postgres); ask the seams in storage/contracts.ts (DESIGN.md §2)` })
      }
    }
  }
  for (const pair of CONCRETE_BACKEND_ALLOWED) {
    if (!allowedSeen.has(pair)) problems.push({ where: 'scripts/check-layers.ts', message: `CONCRETE_BACKEND_ALLOWED lists "${pair}", an import that no longer exists: delete the entry` })
  }
  return problems
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'))
  const problems = checkLayers(root)
  for (const problem of problems) process.stderr.write(`${problem.where}: ${problem.message}\n`)
  if (problems.length > 0) {
    process.stderr.write(`check-layers: ${problems.length} import${problems.length === 1 ? '' : 's'} against the layers (decision 0061)\n`)
    process.exitCode = 1
  }
}
