/**
 * Benchmark: the cost of starting engram, each figure beside the simplest process doing the same
 * job, measured in the same run. Run: `npm run bench -- startup [--runs N] [--only status|first]
 * [--against DIR [--against-label NAME]]` (the first answers of another checkout, e.g. main, taking turns
 * with this one's).
 *
 * 1. Open a home and print `engram status`, beside a bare `node -e ''` (the floor any CLI pays).
 * 2. The first answer (startup-first-answer.ts): `engram mcp` from its spawn to its first
 *    `search_memory` answer through the official MCP client, and a fresh process's `createMind` →
 *    `mind.session` → first `begin`, beside a plain FTS5 query and a minimal MCP server.
 *
 * The home is seeded with a realistic small memory (rules, 300 lessons, two of them about the
 * `search_memory` tool, 30 knowledge files, 2,000 messages) so that opening includes the hand-edit
 * check over every file. The commands take turns run by run, so a machine busy with other work
 * slows each of them alike.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { openMindInternals } from '../../src/mind-internals.ts'
import { measureFirstAnswers } from './startup-first-answer.ts'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' }, only: { type: 'string' }, against: { type: 'string' }, 'against-label': { type: 'string' } } })
const runs = Number(values.runs)
const root = resolve(import.meta.dirname, '../..')
const dir = mkdtempSync(join(tmpdir(), 'engram-bench-startup-'))
const home = join(dir, 'home')
const env = { HOME: join(dir, 'user-home'), PATH: process.env.PATH ?? '' }

const mind = await openMindInternals({ home, env })
/** Every text seeded, for the first-answer bench's plain FTS5 floor. */
const texts: string[] = []
const store = mind.backend.engrams('global')!
for (let i = 0; i < 20; i++) {
  const text = `Rule number ${i} about tool ${i * 7}`
  texts.push(text)
  await store.encodeRule({ kind: i % 3 === 0 ? 'never' : 'always', text, confidence: 'high', source: 'user', meta: {} })
}
for (let i = 0; i < 300; i++) {
  const text = `Lesson ${i}: service ${i % 17} answers in ${i * 3} ms under load`
  texts.push(text)
  await store.encodeLesson({ kind: 'lesson', text, topic: `service-${i % 17}`, confidence: 'medium', source: 'llm', meta: {} })
}
// Lessons about a tool: listing the tools then adds them to its description (tool wisdom).
for (const text of ['search_memory finds more with the names of things than with a whole question', 'search_memory: ask again with other words when nothing comes back']) {
  texts.push(text)
  await store.encodeLesson({ kind: 'lesson', text, tool: 'search_memory', confidence: 'medium', source: 'llm', meta: {} })
}
for (let i = 0; i < 30; i++) {
  const text = `# Topic ${i}\n\n${'Some durable fact about the system. '.repeat(40)}\n`
  texts.push(text)
  await mind.backend.documents.write('knowledge', `topic-${i}`, { confidence: 0.8 }, text)
}
const conversation = await mind.backend.context.conversation('bench', { agent: mind.agent })
const at = new Date().toISOString()
for (let batch = 0; batch < 20; batch++) {
  const messages = Array.from({ length: 100 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: `message ${batch * 100 + i}`, at, tokenCount: 3 }))
  texts.push(...messages.map((message) => message.content))
  await mind.backend.context.appendMessages(conversation.id, messages)
}
await mind.reindex()
await mind.close()

interface Variant {
  label: string
  args: string[]
  env?: Record<string, string>
}

/**
 * CPU time (user + system, ms) of the children waited for so far, from /proc (Linux: USER_HZ = 100),
 * else undefined. Unlike wall time it hardly moves when other work shares the cores.
 */
function childrenCpuMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? []
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100
  } catch {
    return undefined
  }
}

/** Each variant's wall and CPU times, sorted; the variants take turns, after two warm-up rounds (the OS file cache, Node's compile cache). */
function time(variants: Variant[]): Array<{ wall: number[]; cpu: number[] }> {
  const samples = variants.map(() => ({ wall: [] as number[], cpu: [] as number[] }))
  for (let i = 0; i < runs + 2; i++) {
    variants.forEach((variant, v) => {
      const cpuBefore = childrenCpuMs()
      const start = performance.now()
      execFileSync(process.execPath, variant.args, { cwd: root, env: { ...env, ...variant.env }, stdio: ['ignore', 'pipe', 'pipe'] })
      const wall = performance.now() - start
      const cpuAfter = childrenCpuMs()
      if (i < 2) return
      samples[v]?.wall.push(wall)
      if (cpuBefore !== undefined && cpuAfter !== undefined) samples[v]?.cpu.push(cpuAfter - cpuBefore)
    })
  }
  const sorted = (list: number[]) => list.sort((a, b) => a - b)
  return samples.map(({ wall, cpu }) => ({ wall: sorted(wall), cpu: sorted(cpu) }))
}
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number

/** `root`'s sources compiled into `root/.bench/dist`, with resources/ beside it as in the package (the word vectors, WordNet, the token ranks). */
function compiled(root: string): string {
  const built = join(root, '.bench', 'dist')
  rmSync(join(root, '.bench'), { recursive: true, force: true })
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--outDir', built], { cwd: root, stdio: 'inherit' })
  symlinkSync(join(root, 'resources'), join(root, '.bench', 'resources'))
  return built
}

// The published package runs compiled JavaScript; from a clone, Node strips the types of the
// sources on every start. Both are measured.
const built = compiled(root)
// --against DIR: another checkout (e.g. main) whose first answers are measured in the same run,
// taking turns with this one's, so that a busy machine slows both alike.
const against = values.against === undefined ? undefined : { root: resolve(values.against), built: compiled(resolve(values.against)), label: values['against-label'] ?? basename(resolve(values.against)) }

if (values.only !== 'first') {
  const status = ['status', '--home', home, '--json']
  const bin = join(built, 'interfaces/cli/bin.js')
  const variants: Variant[] = [
    { label: "node -e '' (baseline)", args: ['-e', ''] },
    { label: 'engram status, compiled (dist/, as installed from the registry)', args: [bin, ...status] },
    { label: 'engram status, compiled, without the compile cache (NODE_DISABLE_COMPILE_CACHE=1)', args: [bin, ...status], env: { NODE_DISABLE_COMPILE_CACHE: '1' } },
    { label: 'engram --help, compiled (the command line alone)', args: [bin, '--help'] },
    { label: 'engram status, from the TypeScript sources (a clone)', args: ['src/interfaces/cli/bin.ts', ...status] },
  ]
  const loadBefore = loadavg()[0] as number
  const samples = time(variants)
  const loadAfter = loadavg()[0] as number

  console.log(`engram status vs bare node (${runs} runs each, taking turns; Node ${process.version}, ${process.platform}/${process.arch}; load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after)`)
  console.log('| command | p50 ms | p95 ms | CPU p50 ms (user + system) |')
  console.log('|---|---|---|---|')
  variants.forEach((variant, v) => {
    const { wall, cpu } = samples[v] as { wall: number[]; cpu: number[] }
    console.log(`| ${variant.label} | ${pct(wall, 0.5).toFixed(0)} | ${pct(wall, 0.95).toFixed(0)} | ${cpu.length > 0 ? pct(cpu, 0.5).toFixed(0) : 'n/a'} |`)
  })
  const over = pct((samples[1] as { wall: number[] }).wall, 0.5) - pct((samples[0] as { wall: number[] }).wall, 0.5)
  console.log(`\nengram status, compiled, p50 over the baseline's: ${over.toFixed(0)} ms (decision 0041 asks for at most 100)`)
}
if (values.only !== 'status') await measureFirstAnswers({ root, built, home, env, texts, dir, runs, ...(against ? { against } : {}) })
rmSync(dir, { recursive: true, force: true })
rmSync(join(root, '.bench'), { recursive: true, force: true })
if (against) rmSync(join(against.root, '.bench'), { recursive: true, force: true })
