/**
 * Benchmark: engram as a new user installs it (decision 0040). Builds dist/, packs the package with
 * `npm pack`, installs the tarball into an empty temporary project with `npm install` (the
 * dependencies come from the registry), and reports, each beside a baseline measured in the same
 * run:
 *
 *  - `node_modules`: its size on disk and the largest packages;
 *  - the first CLI calls on a fresh install: `engram status`, and `engram search` (which reads
 *    the word vectors: the offline embedder re-ranks its lexical candidates), beside a bare
 *    `node -e ''`;
 *  - a first `session.begin` in a fresh process (time of the call, of the whole process, and peak
 *    resident memory), with the default offline embedder and with `embed.provider none`.
 *
 *   npm run bench -- install [--runs N]   (N: repeated calls after the first, default 5)
 *
 * The home is seeded once (a few hundred messages and lessons of English text) so that priming
 * and search have candidates to re-rank. Peak RSS is read from the process itself on exit
 * (`process.resourceUsage().maxRSS`, preloaded with --import). Targets (decision 0040):
 * node_modules ≤ 120 MB, first CLI call ≤ 1 s, first begin ≤ 300 ms and ≤ 150 MB resident.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, keep: { type: 'boolean', default: false } } })
const runs = Number(values.runs)
const root = resolve(import.meta.dirname, '../..')
const dir = mkdtempSync(join(tmpdir(), 'engram-bench-install-'))
const project = join(dir, 'project')
const home = join(dir, 'home')
mkdirSync(project)
// npm and the children run on this Node (engram needs >= 22.13).
const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: join(dir, 'user-home'), ENGRAM_HOME: home }
const log = (line: string) => process.stderr.write(`${line}\n`)

// 1. Build and pack, as `npm publish` would.
let started = performance.now()
execFileSync('bash', ['scripts/run.sh', 'build'], { cwd: root, stdio: 'inherit' })
const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number }>
const tarball = packed[0] as { filename: string; size: number; unpackedSize: number; entryCount: number }
log(`built and packed in ${((performance.now() - started) / 1000).toFixed(1)} s: ${tarball.filename}`)

// 2. Install into an empty project.
writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'engram-install-bench', private: true, type: 'module' })}\n`)
started = performance.now()
execFileSync('npm', ['install', join(dir, tarball.filename), '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, env, stdio: 'inherit' })
const installSeconds = (performance.now() - started) / 1000

/** Bytes on disk under `path` (du), and the apparent size. */
function sizeOf(path: string): number {
  return Number(execFileSync('du', ['-s', '--block-size=1', path], { encoding: 'utf8' }).split('\t')[0])
}
const modules = join(project, 'node_modules')
const packages: Array<[string, number]> = []
for (const entry of readdirSync(modules)) {
  if (entry.startsWith('.')) continue
  if (entry.startsWith('@')) for (const scoped of readdirSync(join(modules, entry))) packages.push([`${entry}/${scoped}`, sizeOf(join(modules, entry, scoped))])
  else packages.push([entry, sizeOf(join(modules, entry))])
}
packages.sort((a, b) => b[1] - a[1])
const mb = (bytes: number) => (bytes / 1e6).toFixed(1)

// 3. A seeded home, written through the installed package.
const rss = join(dir, 'rss.mjs')
writeFileSync(rss, "process.on('exit', () => process.stderr.write('\\nmaxrss ' + process.resourceUsage().maxRSS + '\\n'))\n")
writeFileSync(
  join(project, 'seed.mjs'),
  `import { createMind } from 'engram'
const mind = await createMind({ home: process.env.ENGRAM_HOME })
const topics = ['violin lessons on Tuesday', 'hiking in the mountains near Denver', 'the billing export runs nightly', 'my daughter plays the cello', 'we adopted a dog from the shelter', 'the deploy failed because of a missing migration', 'she bought a pendant in Paris', 'the quarterly report is due in March']
const at = (i) => new Date(Date.parse('2026-03-01T10:00:00.000Z') + i * 60_000).toISOString()
for (let s = 0; s < 20; s++) {
  await mind.context.append({ sessionId: 'seed-' + s, agent: mind.agent }, Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'About ' + topics[(s + i) % topics.length] + ', part ' + i + ' of session ' + s + '.', at: at(s * 20 + i) })))
}
await mind.indexed()
await mind.close()
`,
)
writeFileSync(
  join(project, 'begin.mjs'),
  `const started = performance.now()
const { createMind } = await import('engram')
const imported = performance.now()
const mind = await createMind({ home: process.env.ENGRAM_HOME })
const opened = performance.now()
const turn = await mind.session('bench-' + process.pid, { user: 'ada' }).begin('What instrument does my daughter play?')
const begun = performance.now()
if (!turn) throw new Error('no turn')
process.stderr.write(JSON.stringify({ importMs: imported - started, createMs: opened - imported, beginMs: begun - opened }) + '\\n')
await mind.close()
`,
)
execFileSync(process.execPath, ['seed.mjs'], { cwd: project, env, stdio: 'inherit' })

interface Sample {
  ms: number
  maxRssMb: number
  begin?: { importMs: number; createMs: number; beginMs: number }
}
function run(args: string[], extraEnv: Record<string, string> = {}): Sample {
  const start = performance.now()
  const result = spawnSync(process.execPath, ['--import', rss, ...args], { cwd: project, env: { ...env, ...extraEnv }, encoding: 'utf8' })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  const maxRss = /maxrss (\d+)/.exec(result.stderr)
  const begin = /^\{"importMs".*$/m.exec(result.stderr)
  return { ms, maxRssMb: Number(maxRss?.[1]) / 1024, ...(begin ? { begin: JSON.parse(begin[0]) } : {}) }
}
const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] as number

const bin = 'node_modules/engram/dist/interfaces/cli/bin.js'
const measures: Array<{ name: string; args: string[]; env?: Record<string, string> }> = [
  { name: "node -e '' (baseline)", args: ['-e', ''] },
  { name: 'engram status', args: [bin, 'status', '--json'] },
  { name: 'engram search "violin" (reads the word vectors)', args: [bin, 'search', 'violin', '--json'] },
  { name: 'engram search "violin", embed.provider none', args: [bin, 'search', 'violin', '--json'], env: { ENGRAM_EMBED_PROVIDER: 'none' } },
  { name: 'session.begin, offline embedder (default)', args: ['begin.mjs'] },
  { name: 'session.begin, embed.provider none (baseline)', args: ['begin.mjs'], env: { ENGRAM_EMBED_PROVIDER: 'none' } },
]
// The first call of each is its own row; then the calls alternate, so a disturbance hits all alike.
const firsts = measures.map((measure) => run(measure.args, measure.env))
const later: Sample[][] = measures.map(() => [])
for (let i = 0; i < runs; i++) {
  for (const [m, measure] of measures.entries()) later[m]?.push(run(measure.args, measure.env))
}

console.log(`engram install (Node ${process.version}, ${process.platform}/${process.arch}, ${new Date().toISOString().slice(0, 10)})`)
console.log('')
console.log(`tarball ${mb(tarball.size)} MB (${tarball.entryCount} files, ${mb(tarball.unpackedSize)} MB unpacked); npm install ${installSeconds.toFixed(1)} s`)
console.log(`node_modules ${mb(sizeOf(modules))} MB on disk, ${packages.length} packages; largest:`)
console.log('')
console.log('| package | MB |')
console.log('|---|---|')
for (const [name, bytes] of packages.slice(0, 10)) console.log(`| ${name} | ${mb(bytes)} |`)
console.log('')
console.log(`| call (fresh process each) | first ms | first peak RSS MB | median of next ${runs} ms | begin() first ms | begin() median ms |`)
console.log('|---|---|---|---|---|---|')
measures.forEach((measure, m) => {
  const first = firsts[m] as Sample
  const rest = later[m] as Sample[]
  const beginFirst = first.begin ? first.begin.beginMs.toFixed(0) : '-'
  const beginMedian = first.begin ? median(rest.map((s) => s.begin?.beginMs ?? 0)).toFixed(0) : '-'
  console.log(`| ${measure.name} | ${first.ms.toFixed(0)} | ${first.maxRssMb.toFixed(0)} | ${median(rest.map((s) => s.ms)).toFixed(0)} | ${beginFirst} | ${beginMedian} |`)
})
if (values.keep) log(`kept ${dir}`)
else rmSync(dir, { recursive: true, force: true })
