/**
 * The memory-file fuzzer (decision 0025). One "home" at a time: valid memory is written
 * into every memory folder of every owner's tree (the agent's, a user's, the shared one, the
 * project's), then random variants are written over, beside and onto those files — random text,
 * valid files cut short, binary, bare carriage returns, byte-order marks, files over the size
 * limit, hostile YAML and JSON, named pipes, folders with memory names, link loops, dangling links
 * and links leading out of the home to a file holding a canary word. Then a mind opens, reports
 * its status, reindexes, runs a turn for the user and one for the agent, maintains, closes; then
 * opens again and writes a rule and a lesson into every tree.
 *
 * A home fails when any of that throws (a refused write to a file engram skips is no failure),
 * when a line that was in a memory file before is missing after (every valid entry, every line
 * that could not be read — byte for byte), or when the canary reaches the database, the prompt or
 * a search. A hang is caught by the parent (memory-fuzz-run.ts), which kills this process when it
 * stops reporting steps.
 *
 * Deterministic: a home's seed decides every variant, so a failure is replayed with its seed.
 */
import { execFileSync } from 'node:child_process'
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { createMind, type Mind } from '../../src/mind.ts'
import { seededRandom } from '../../src/testing/seeded-random.ts'


/** The word every file outside the home holds: found inside engram, it is a leak. */
const CANARY = 'quokkacanary'
const DAY = new Date().toISOString().slice(0, 10)
const OLD_DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)

export const VARIANT_KINDS = [
  'random',
  'truncated',
  'binary',
  'cr-only',
  'bom',
  'oversized',
  'hostile',
  'empty',
  'named-pipe',
  'folder',
  'link-loop',
  'dangling-link',
  'link-outside',
  'link-inside',
] as const
export type VariantKind = (typeof VARIANT_KINDS)[number]

export interface HomeOptions {
  seed: number
  variants: number
  /** `memory.maxFileBytes` of the home: small, so that oversized files cost little to write. */
  maxFileBytes: number
  /** Called before each step: the parent's watchdog names the step a hang happened in. */
  step(name: string): void
}

export interface HomeOutcome {
  seed: number
  variants: Array<{ kind: VariantKind; path: string; mode: string }>
  /** Minds opened (and closed). */
  opens: number
  failures: string[]
  ms: number
}

type FileType = 'rules' | 'lessons' | 'profile' | 'topic' | 'document' | 'episode' | 'activity' | 'state' | 'skill-meta' | 'skill-text' | 'skill-stats' | 'prompt' | 'user-profile' | 'resolutions' | 'journal'

interface Slot {
  /** Home-relative path (`project:` prefixed for the project's memory). */
  path: string
  type: FileType
}

/** Every memory file a home is seeded with, by tree. */
function slots(): Slot[] {
  const out: Slot[] = []
  const trees = ['agents/default', 'agents/default/users/u1', 'shared']
  for (const tree of trees) {
    out.push({ path: `${tree}/memory/rules.md`, type: 'rules' }, { path: `${tree}/memory/lessons.md`, type: 'lessons' }, { path: `${tree}/memory/topics/tea.md`, type: 'topic' })
    out.push({ path: `${tree}/knowledge/tea.md`, type: 'document' }, { path: `${tree}/procedures/brew.md`, type: 'document' })
    if (tree !== 'shared') {
      out.push({ path: `${tree}/memory/profile.md`, type: 'profile' }, { path: `${tree}/episodes/${OLD_DAY}.md`, type: 'episode' })
      out.push({ path: `${tree}/activity/${OLD_DAY}.jsonl`, type: 'activity' }, { path: `${tree}/state/current_task.md`, type: 'state' })
    }
  }
  out.push({ path: 'agents/default/skills/brew-tea/meta.json', type: 'skill-meta' }, { path: 'agents/default/skills/brew-tea/declarative.md', type: 'skill-text' })
  out.push({ path: 'agents/default/skills/brew-tea/stats.json', type: 'skill-stats' })
  out.push({ path: 'agents/default/SYSTEM.md', type: 'prompt' }, { path: 'agents/default/SOUL.md', type: 'prompt' })
  out.push({ path: 'shared/users/u1.md', type: 'user-profile' }, { path: 'shared/resolutions.jsonl', type: 'resolutions' })
  out.push({ path: 'project:rules.md', type: 'rules' }, { path: 'project:lessons.md', type: 'lessons' })
  return out
}

/** A valid file of a type, with `word` in it (so a home's memories are its own). */
function validFile(type: FileType, word: string): string {
  const ts = OLD_DAY
  switch (type) {
    case 'rules':
      return `# Rules\n\n## Always\n- Always greet ${word} by name <!-- confidence:high source:user ts:${ts} -->\n- Always warm the ${word} cup\n\n## Never\n- Never reveal the ${word} code <!-- ts:${ts} -->\n\n## When\n- When deploying ${word}, check the target first <!-- tool:deploy ts:${ts} -->\n`
    case 'lessons':
      return `# Lessons\n- The ${word} service answers in 40 ms <!-- topic:tea confidence:medium ts:${ts} -->\n- Retry the ${word} call once <!-- tool:deploy ts:${ts} -->\n`
    case 'profile':
      return `# Profile\n- Name: ${word}\n- Likes: green tea <!-- ts:${ts} -->\n`
    case 'topic':
      return `# tea\n- The ${word} service answers in 40 ms <!-- topic:tea ts:${ts} -->\nFree notes about ${word} tea.\n`
    case 'document':
      return `---\ncreated_at: "${ts}T09:00:00Z"\ndescription: notes on ${word}\n---\n# ${word}\n\nGreen tea for ${word} is brewed at 80 degrees.\n\n## Steps\n1. Warm the cup.\n2. Steep two minutes.\n`
    case 'episode':
      return `# ${ts}\n\n## 10:00 — ${word} session\nWe talked about ${word} and tea.\n`
    case 'activity':
    case 'journal':
      return `${JSON.stringify({ ts: `${ts}T10:00:00.000Z`, type: 'message_received', content: `About ${word}`, from: 'u1' })}\n${JSON.stringify({ ts: `${ts}T10:00:05.000Z`, type: 'response_sent', content: `Noted ${word}` })}\n`
    case 'state':
      return `# Current task\nHelp ${word} with tea.\n`
    case 'skill-meta':
      return `${JSON.stringify({ name: 'brew tea', when_to_use: `when ${word} asks for tea`, created_at: `${ts}T09:00:00Z` })}\n`
    case 'skill-text':
      return `# Brew tea\n1. Boil water for ${word}.\n2. Cool to 80 degrees.\n`
    case 'skill-stats':
      return `${JSON.stringify({ stage_1: { recommended: 1, used: 1 } })}\n`
    case 'prompt':
      return `You are the assistant of ${word}.\n`
    case 'user-profile':
      return `---\nname: u1\n---\n- Prefers ${word} tea\n`
    case 'resolutions':
      return `${JSON.stringify({ id: word, ts: `${ts}T10:00:00.000Z`, agent: 'default', issue: `the ${word} issue`, session: 's', episode: `episodes/${ts}.md#x`, user: 'u1' })}\n`
  }
}

const FRAGMENTS = [
  '# ', '## Always', '## Never', '## When', '## Other', '- ', '* ', '+ ', '<!-- ', ' -->', 'ts:', 'ts:yesterday', 'ts:2026-02-30', 'ts:99999-01-01', 'topic:',
  'tool:', 'esc:1', '\\u12', '\\', 'confidence:', ':', '---\n', '---', '&a ', '*a', '[', ']', '{', '}', '"', "'", 'null', '\t', '\r', '\r\n', '\n', '\n\n',
  '\u2028', '\u0085', '\u200b', '\ufeff', '\u202e', '🍵', 'é', '日本', '\u0000', '\u0007', '\u001b[31m', '<memory>', '</memory>', '<system>', 'SYSTEM:', '[[link]]',
  '{"ts":', '"type":"message_received"', '"meta":', '1e999', 'NaN', 'x'.repeat(300), ' '.repeat(50),
]

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T
}

function randomText(random: () => number, length: number): string {
  let text = ''
  while (text.length < length) text += random() < 0.7 ? pick(random, FRAGMENTS) : String.fromCharCode(32 + Math.floor(random() * 95))
  return text
}

function randomBytes(random: () => number, length: number): Buffer {
  const bytes = Buffer.alloc(length)
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256)
  return bytes
}

/** Hostile content for a file type: what parsers of that type choke on. */
function hostile(type: FileType, random: () => number, word: string): string {
  const yamlBomb = (): string => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x]']
    for (let i = 1; i < 10; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`)
    return `---\n${lines.join('\n')}\n---\n# bomb\n`
  }
  const options: string[] = [
    yamlBomb(),
    `---\nkey: ${'['.repeat(5000)}\n---\nbody\n`,
    '---\nunclosed: frontmatter\nno end\n',
    '---\n- a list\n- not a mapping\n---\nbody\n',
    `---\ncreated_at: yesterday\nupdated_at: ${'9'.repeat(40)}\n---\n# ${word}\n`,
    `# Lessons\n- x <!-- ts:yesterday -->\n- y <!-- ts:2026-02-30 -->\n- z <!-- ts:${'9'.repeat(30)} -->\n- ${word} <!-- nocolon -->\n- esc <!-- esc:1 -->\\u12\n`,
    `# Rules\n- outside a section\n## Always\n- ${'long '.repeat(2000)}\n## Never\n-\n- <!-- ts:2026-01-01 -->\n`,
    '{"ts": "yesterday", "type": "message_received"}\n{"ts": 5}\n{"type":"nope","ts":"2026-01-01T00:00:00Z"}\n[1,2]\n{"ts":"2026-01-01T00:00:00Z","type":"message_received","meta":[]}\n{"unterminated": \n',
    `${'['.repeat(20000)}${']'.repeat(20000)}\n`,
    '{"name": 5, "when_to_use": {"a": 1}, "created_at": "yesterday"}\n',
    '{"stage_1": "many", "stage_2": {"used": -1}}\n',
  ]
  if (type === 'activity' || type === 'journal' || type === 'resolutions') options.push(options[7] as string)
  return pick(random, options)
}

/** A random path in the folder of `slot`: the slot itself, or a new name beside it. */
function pathNear(slot: Slot, random: () => number): string {
  if (random() < 0.6) return slot.path
  const folder = slot.path.includes('/') ? slot.path.slice(0, slot.path.lastIndexOf('/')) : ''
  const ext = slot.path.endsWith('.jsonl') ? '.jsonl' : slot.path.endsWith('.json') ? '.json' : '.md'
  const day = new Date(Date.now() - Math.floor(random() * 5) * 86_400_000).toISOString().slice(0, 10)
  const name = folder.endsWith('episodes') || folder.endsWith('activity') ? day : pick(random, ['notes', 'x', 'tea-2', 'Big File', 'émoji-🍵', 'a.b', 'current_task'])
  return `${folder}${folder === '' ? '' : '/'}${name}${ext}`
}

export interface FuzzedHome {
  root: string
  home: string
  project: string
  outside: string
  variants: HomeOutcome['variants']
}

/** Absolute path of a home-relative slot path. */
function onDisk(home: string, project: string, path: string): string {
  return path.startsWith('project:') ? join(project, '.engram', 'memory', path.slice('project:'.length)) : join(home, path)
}

function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile()
  } catch {
    return false
  }
}

/** Writes the valid seed files, then `count` variants. */
function fuzz(seed: number, count: number, maxFileBytes: number): FuzzedHome {
  const random = seededRandom(seed)
  const root = join(tmpdir(), `engram-fuzz-${process.pid}-${seed}`)
  rmSync(root, { recursive: true, force: true })
  const home = join(root, 'home')
  const project = join(root, 'project')
  const outside = join(root, 'outside')
  mkdirSync(outside, { recursive: true })
  writeFileSync(join(outside, 'secret.md'), `# Outside\n- The ${CANARY} secret <!-- ts:${DAY} -->\n{"ts":"${DAY}T00:00:00Z","type":"message_received","content":"${CANARY}"}\n`)
  const word = `w${seed.toString(36)}`
  const all = slots()
  for (const slot of all) {
    const path = onDisk(home, project, slot.path)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, validFile(slot.type, word))
  }
  const variants: HomeOutcome['variants'] = []
  for (let n = 0; n < count; n++) {
    const slot = pick(random, all)
    const path = pathNear(slot, random)
    const absolute = onDisk(home, project, path)
    const kind = pick(random, VARIANT_KINDS)
    const valid = validFile(slot.type, `${word}v${n}`)
    const special = kind === 'named-pipe' || kind === 'folder' || kind.includes('link')
    const mode = special ? 'replace' : pick(random, ['replace', 'append', 'replace'])
    variants.push({ kind, path, mode })
    mkdirSync(dirname(absolute), { recursive: true })
    // Appending goes to a regular file only: writing into a pipe an earlier variant made would block this process.
    if (special || mode === 'replace' || !isRegularFile(absolute)) rmSync(absolute, { recursive: true, force: true })
    let content: string | Buffer | undefined
    switch (kind) {
      case 'random':
        content = randomText(random, 1 + Math.floor(random() * 3000))
        break
      case 'truncated': {
        const bytes = Buffer.from(valid, 'utf8')
        content = bytes.subarray(0, Math.floor(random() * bytes.length))
        break
      }
      case 'binary':
        content = randomBytes(random, 1 + Math.floor(random() * 4000))
        break
      case 'cr-only':
        content = valid.replaceAll('\n', '\r')
        break
      case 'bom':
        content = `\ufeff${random() < 0.5 ? valid : valid.replaceAll('\n', '\r\n')}`
        break
      case 'oversized':
        content = `${valid}${'- padding line of an oversized file\n'.repeat(Math.ceil(maxFileBytes / 36) + 1)}`
        break
      case 'hostile':
        content = hostile(slot.type, random, word)
        break
      case 'empty':
        content = ''
        break
      case 'named-pipe':
        execFileSync('mkfifo', [absolute])
        break
      case 'folder':
        mkdirSync(join(absolute, 'inner.md'), { recursive: true })
        break
      case 'link-loop':
        symlinkSync(absolute, absolute)
        break
      case 'dangling-link':
        symlinkSync(join(dirname(absolute), 'nothing-here'), absolute)
        break
      case 'link-outside':
        symlinkSync(join(outside, 'secret.md'), absolute)
        break
      case 'link-inside': {
        const other = onDisk(home, project, pick(random, all).path)
        symlinkSync(other, absolute)
        break
      }
    }
    if (content !== undefined) {
      if (mode === 'append') writeFileSync(absolute, content, { flag: 'a' })
      else writeFileSync(absolute, content)
    }
  }
  return { root, home, project, outside, variants }
}

/** Every regular file under `dir` (links not followed), home-relative, with its bytes. */
function snapshot(dir: string, base: string, into: Map<string, Buffer>): Map<string, Buffer> {
  let entries: import('node:fs').Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return into
  }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) snapshot(path, base, into)
    else if (entry.isFile()) into.set(relative(base, path), readFileSync(path))
  }
  return into
}

/** The non-blank lines of a file, byte for byte (Latin-1 keeps every byte as one character). */
function linesOf(bytes: Buffer): string[] {
  return bytes
    .toString('latin1')
    .split(/\r\n|\n|\r/)
    .filter((line) => line.trim() !== '')
}

/** Whether every line of `before` is in `after`, in order. */
function keepsLines(before: Buffer, after: Buffer): boolean {
  const old = linesOf(before)
  const now = linesOf(after)
  let at = 0
  for (const line of now) if (at < old.length && line === old[at]) at++
  return at === old.length
}

/** Files whose lines engram may legitimately move away: journals are claimed and settled, the database is SQLite's. */
function preserved(path: string): boolean {
  return !path.includes('/journal/') && !path.startsWith('engram.db') && !path.includes('/archive/') && !path.startsWith('locks') && !path.includes('.locks')
}

/** One home: fuzz, then every operation, then the checks. Never throws; failures are returned. */
export async function fuzzHome(options: HomeOptions): Promise<HomeOutcome> {
  const started = performance.now()
  const failures: string[] = []
  let opens = 0
  const env = { HOME: '/nonexistent-home', PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' }
  const settings = { 'memory.maxFileBytes': options.maxFileBytes, 'log.level': 'silent' }
  options.step('seed and fuzz')
  const fuzzed = fuzz(options.seed, options.variants, options.maxFileBytes)
  const { home, project } = fuzzed
  const open = async (): Promise<Mind> => {
    const mind = await createMind({ home, project, env, settings, ignoreConfigFile: true })
    opens++
    return mind
  }
  const attempt = async (name: string, work: () => Promise<void>): Promise<void> => {
    options.step(name)
    try {
      await work()
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    }
  }
  const files = (): Map<string, Buffer> => {
    const found = snapshot(home, home, new Map())
    const projectMemory = join(project, '.engram', 'memory')
    for (const [path, bytes] of snapshot(projectMemory, projectMemory, new Map())) found.set(`project:${path}`, bytes)
    return found
  }
  const before = files()
  const seen: string[] = []

  let mind: Mind | undefined
  await attempt('createMind', async () => {
    mind = await open()
  })
  if (mind) {
    const opened = mind
    await attempt('status', async () => {
      seen.push(JSON.stringify(await opened.status()))
    })
    await attempt('reindex', async () => {
      await opened.reindex()
    })
    for (const user of ['u1', undefined]) {
      await attempt(`turn (${user ?? 'agent'})`, async () => {
        const session = opened.session(`fuzz-${user ?? 'agent'}`, user === undefined ? {} : { user })
        const turn = await session.begin('How do I brew green tea, and what did we say about the secret?')
        seen.push(turn.system, ...turn.warnings)
        const search = turn.tools.find((tool) => tool.name === 'search_memory')
        if (search) seen.push((await search.execute({ query: 'secret tea brew', limit: 20 })).text)
        await session.end(turn, 'Warm the cup, then steep at 80 degrees.')
      })
    }
    await attempt('maintain', async () => {
      await opened.maintain({ forceCompaction: true })
    })
    await attempt('close', async () => {
      await opened.close()
    })
  }

  // The later write: a rule and a lesson in every tree. A refusal to write over what engram skips
  // (a pipe, a folder, a link out, a file over the limit) is the expected answer, not a failure.
  await attempt('later write', async () => {
    const writer = await open()
    try {
      for (const owner of ['agent', 'user:u1', 'shared'] as const) {
        for (const scope of ['global', 'project'] as const) {
          const store = writer.backend.owned(owner).engrams(scope)
          if (!store) continue
          for (const write of [
            () => store.encodeRule({ text: `Always keep the fuzz ${owner} ${scope} rule`, kind: 'always', meta: {} }),
            () => store.encodeLesson({ text: `The fuzz ${owner} ${scope} lesson`, kind: 'lesson', topic: 'tea', meta: {} }),
          ]) {
            await write().catch((error: { code?: string }) => {
              if (error.code !== 'storage_unavailable') throw error
            })
          }
        }
      }
      await writer.idle()
    } finally {
      await writer.close()
    }
  })

  options.step('check')
  const after = files()
  for (const [path, bytes] of before) {
    if (!preserved(path)) continue
    const now = after.get(path)
    if (now === undefined) {
      // A file that is no longer a regular file at its path was moved by engram: never.
      let what = 'gone'
      try {
        what = lstatSync(onDisk(home, project, path)).isFile() ? 'present' : 'no longer a file'
      } catch {}
      failures.push(`check: ${path} is ${what} after the operations`)
    } else if (!keepsLines(bytes, now)) failures.push(`check: ${path} lost lines it had before (valid entries or lines kept as they were)`)
  }
  for (const name of ['engram.db', 'engram.db-wal']) {
    try {
      if (readFileSync(join(home, name)).includes(CANARY)) failures.push(`check: ${name} holds content of a file outside the home`)
    } catch {}
  }
  for (const text of seen) if (text.includes(CANARY)) failures.push(`check: content of a file outside the home reached a prompt, status or search: ${text.slice(0, 200)}`)

  rmSync(fuzzed.root, { recursive: true, force: true })
  return { seed: options.seed, variants: fuzzed.variants, opens, failures, ms: Math.round(performance.now() - started) }
}
