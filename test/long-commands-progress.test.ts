// @slow: builds a home of 10,000 files
/**
 * The long commands tell how far they are and stop cleanly on Ctrl-C (decision 0073), run as a
 * person runs them: the real `engram` binary in a child process, its stderr read as a stream.
 *
 * On a home of 10,000 memory files (the agent's and two users'), each of reindex --full, export,
 * import, migrate --to DIR, consolidate daily, forget --user --purge (the erasure) and eval
 * prints progress on stderr before it ends, keeps stdout one JSON envelope, and leaves nothing in
 * `.locks/`. SIGINT stops reindex, import and migrate at a safe point with exit 130 and how to
 * resume; the next run ends where an uninterrupted one ends (the index and the exported memory
 * compared).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const BIN = join(import.meta.dirname, '..', 'src', 'interfaces', 'cli', 'bin.ts')
const TINY_EVAL = join(import.meta.dirname, '..', 'src', 'eval', 'fixtures', 'tiny.eval.json')

interface StderrLine {
  command?: string
  phase?: string
  done?: number
  total?: number
  outcome?: string
  msg?: string
  text?: string
}

interface Run {
  code: number | null
  envelope: { ok: boolean; data: Record<string, unknown> & { interrupted?: boolean; resume?: string } }
  lines: StderrLine[]
  /** When the first progress line came, and when the process exited (ms after it started). */
  firstProgressMs: number | undefined
  exitMs: number
}

/** Runs `engram ARGS --json` as a child process; `interruptOn` sends SIGINT at the first stderr line it accepts. */
function engram(temp: TempHome, args: string[], interruptOn?: (line: StderrLine) => boolean): Promise<Run> {
  const started = performance.now()
  const child = spawn(process.execPath, [BIN, ...args, '--json'], { env: temp.env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let pending = ''
  let interrupted = false
  const lines: StderrLine[] = []
  let firstProgressMs: number | undefined
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    pending += chunk.toString()
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const text = pending.slice(0, end)
      pending = pending.slice(end + 1)
      let line: StderrLine
      try {
        line = JSON.parse(text) as StderrLine
      } catch {
        line = { text }
      }
      lines.push(line)
      if (line.phase !== undefined && firstProgressMs === undefined) firstProgressMs = performance.now() - started
      if (!interrupted && interruptOn?.(line)) {
        interrupted = true
        child.kill('SIGINT')
      }
    }
  })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      let envelope: Run['envelope']
      try {
        envelope = JSON.parse(stdout) as Run['envelope']
      } catch {
        reject(new Error(`stdout of engram ${args.join(' ')} is not one JSON envelope (exit ${code}): ${stdout.slice(0, 2000)}\nstderr: ${lines.map((line) => line.msg ?? line.text).join('\n')}`))
        return
      }
      resolve({ code, envelope, lines, firstProgressMs, exitMs: performance.now() - started })
    })
  })
}

/** The command showed progress while it ran: its first progress line came at least `leadMs` before it exited. */
function assertProgressBeforeEnd(run: Run, name: string, leadMs: number): void {
  assert.notEqual(run.firstProgressMs, undefined, `${name}: no progress line on stderr: ${JSON.stringify(run.lines.slice(0, 5))}`)
  const lead = run.exitMs - (run.firstProgressMs as number)
  assert.ok(lead >= leadMs, `${name}: the first progress line came ${Math.round(lead)} ms before the end (${Math.round(run.exitMs)} ms in all)`)
  // A line a second at most, and one as each phase starts: never a line per item.
  const progress = run.lines.filter((line) => line.phase !== undefined)
  const phases = new Set(progress.map((line) => line.phase)).size
  assert.ok(progress.length <= phases + Math.ceil(run.exitMs / 1000) + 1, `${name}: ${progress.length} progress lines in ${Math.round(run.exitMs)} ms`)
}

function assertNoLockFiles(home: string, name: string): void {
  const dir = join(home, '.locks')
  const left = existsSync(dir) ? readdirSync(dir) : []
  assert.deepEqual(left.slice(0, 5), [], `${name}: ${left.length} files left in .locks/`)
}

const FRONTMATTER = (at: string): string => `---\ncreated_at: ${at}\nupdated_at: ${at}\nsource_episodes: 0\nconfidence: 0.5\nauto_consolidated: false\nversion: 1\n---\n`

/** Writes `count` knowledge files spread over the agent's tree and the trees of users ada and bo, with the seed's frontmatter. */
function buildHome(home: string, count: number): void {
  const agentTree = join(home, 'agents', 'default')
  const trees = [agentTree, join(agentTree, 'users', 'ada'), join(agentTree, 'users', 'bo')]
  for (const tree of trees) mkdirSync(join(tree, 'knowledge'), { recursive: true })
  const at = new Date().toISOString()
  for (let i = 0; i < count; i++) {
    const topic = ['tea', 'vpn', 'deploy', 'billing', 'garden'][i % 5]
    writeFileSync(join(trees[i % 3] as string, 'knowledge', `${topic}-${i}.md`), `${FRONTMATTER(at)}# ${topic} note ${i}\nFact ${i}: the ${topic} setting number ${i % 97} is ${60 + (i % 40)}.\n`)
  }
}

/** The search index of a home: every unit's id and hash, sorted. */
function indexOf(home: string): string[] {
  const db = new DatabaseSync(join(home, 'engram.db'), { readOnly: true })
  try {
    return (db.prepare('SELECT id, hash FROM index_units ORDER BY id').all() as Array<{ id: string; hash: string }>).map((row) => `${row.id} ${row.hash}`)
  } finally {
    db.close()
  }
}

/** Every file under `dir` (relative path → text), the manifest's time of export left out. */
function treeOf(dir: string): Map<string, string> {
  const files = new Map<string, string>()
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name !== 'manifest.json') files.set(relative(dir, path), readFileSync(path, 'utf8'))
    }
  }
  walk(dir)
  return files
}

/** A home's memory as `engram export` writes it, with its index: what two homes must share to have ended in the same place. */
async function memoryOf(temp: TempHome, home: string, exportDir: string): Promise<{ files: Map<string, string>; index: string[] }> {
  const run = await engram(temp, ['export', exportDir, '--home', home])
  assert.equal(run.code, 0, JSON.stringify(run.envelope))
  return { files: treeOf(exportDir), index: indexOf(home) }
}

function assertInterrupted(run: Run, name: string, resume: RegExp): void {
  assert.equal(run.code, 130, `${name}: exit ${run.code}, ${JSON.stringify(run.envelope).slice(0, 500)}`)
  assert.equal(run.envelope.ok, false)
  assert.equal(run.envelope.data.interrupted, true)
  assert.match(run.envelope.data.resume ?? '', resume)
  assert.ok(
    run.lines.some((line) => /stopping at the next safe point/.test(line.msg ?? '')),
    `${name}: said it is stopping`,
  )
}

test('each long command shows progress on stderr before it ends on a home of 10,000 files, and leaves no lock files', async (t) => {
  const temp = makeTempHome('engram-long-')
  t.after(temp.cleanup)
  const home = join(temp.home, 'big')
  buildHome(home, 10_000)

  const reindex = await engram(temp, ['reindex', '--full', '--home', home])
  assert.equal(reindex.code, 0, JSON.stringify(reindex.envelope))
  assert.equal((reindex.envelope.data as { added: number }).added, 10_000)
  assertProgressBeforeEnd(reindex, 'reindex --full', 1000)
  assertNoLockFiles(home, 'reindex --full')
  const indexed = indexOf(home)

  // Ctrl-C while units are written: it stops between batches; a full reindex again ends where the first one did.
  const stopped = await engram(temp, ['reindex', '--full', '--home', home], (line) => line.phase === 'writing units')
  assertInterrupted(stopped, 'reindex --full', /engram reindex --full/)
  assertNoLockFiles(home, 'interrupted reindex')
  const again = await engram(temp, ['reindex', '--full', '--home', home])
  assert.equal(again.code, 0)
  assert.deepEqual(indexOf(home), indexed, 'the index after the interrupted reindex and a full one is the index of an uninterrupted run')

  const exportDir = join(temp.home, 'big-export')
  const exported = await engram(temp, ['export', exportDir, '--home', home])
  assert.equal(exported.code, 0, JSON.stringify(exported.envelope))
  assert.equal((exported.envelope.data as { counts: { knowledge: number } }).counts.knowledge, 10_000)
  assertProgressBeforeEnd(exported, 'export', 1000)
  assertNoLockFiles(home, 'export')

  // The same tree back into the home it came from: every file is read and compared, none written again.
  const imported = await engram(temp, ['import', 'engram', exportDir, '--home', home])
  assert.equal(imported.code, 0, JSON.stringify(imported.envelope))
  assert.equal((imported.envelope.data as { counts: { unchanged: number } }).counts.unchanged, 10_000)
  assertProgressBeforeEnd(imported, 'import', 1000)
  assertNoLockFiles(home, 'import')

  // Moving 10,000 files takes minutes here: it shows its progress, then Ctrl-C stops it, in both homes without a lock file.
  const target = join(temp.home, 'big-target')
  const migrated = await engram(temp, ['migrate', '--to', target, '--home', home], (line) => line.phase === 'importing files' && (line.done ?? 0) > 0)
  assertInterrupted(migrated, 'migrate --to DIR', /engram migrate --to/)
  assertProgressBeforeEnd(migrated, 'migrate --to DIR', 1000)
  assertNoLockFiles(home, 'migrate (source)')
  assertNoLockFiles(target, 'migrate (target)')

  const consolidated = await engram(temp, ['consolidate', 'daily', '--home', home])
  assert.equal(consolidated.code, 0, JSON.stringify(consolidated.envelope))
  assertProgressBeforeEnd(consolidated, 'consolidate daily', 1000)
  assert.ok(consolidated.lines.some((line) => line.phase === 'reviewing documents' && (line.done ?? 0) > 0))
  assertNoLockFiles(home, 'consolidate daily')

  const erased = await engram(temp, ['forget', '--user', 'bo', '--purge', '--home', home])
  assert.equal(erased.code, 0, JSON.stringify(erased.envelope))
  assertProgressBeforeEnd(erased, 'forget --user --purge', 0)
  assert.ok(erased.lines.some((line) => line.phase === 'erasing' && line.total !== undefined))
  assertNoLockFiles(home, 'forget --user --purge')

  const evaluated = await engram(temp, ['eval', 'retrieval', TINY_EVAL, '--run', join(temp.home, 'run.jsonl'), '--embedder', 'none', '--home', home])
  assert.equal(evaluated.code, 0, JSON.stringify(evaluated.envelope))
  assertProgressBeforeEnd(evaluated, 'eval retrieval', 0)
  assertNoLockFiles(home, 'eval retrieval')
})

test('Ctrl-C stops import and migrate at a safe point, and the next run ends where an uninterrupted run ends', async (t) => {
  const temp = makeTempHome('engram-resume-')
  t.after(temp.cleanup)
  const source = join(temp.home, 'source')
  buildHome(source, 400)
  assert.equal((await engram(temp, ['reindex', '--home', source])).code, 0)
  const tree = join(temp.home, 'tree')
  assert.equal((await engram(temp, ['export', tree, '--home', source])).code, 0)
  const stopAtImport = (line: StderrLine): boolean => line.phase === 'importing files'

  // import engram: into one home at once, into another with a Ctrl-C and a second run.
  const whole = join(temp.home, 'import-whole')
  assert.equal((await engram(temp, ['import', 'engram', tree, '--home', whole])).code, 0)
  const resumed = join(temp.home, 'import-resumed')
  const stopped = await engram(temp, ['import', 'engram', tree, '--home', resumed], stopAtImport)
  assertInterrupted(stopped, 'import', /engram import engram .* again/)
  assertNoLockFiles(resumed, 'interrupted import')
  const finished = await engram(temp, ['import', 'engram', tree, '--home', resumed])
  assert.equal(finished.code, 0, JSON.stringify(finished.envelope))
  const importedWhole = await memoryOf(temp, whole, join(temp.home, 'export-import-whole'))
  assert.equal(importedWhole.files.size, 401, 'the 400 files and README.md (manifest.json left out)')
  assert.deepEqual(await memoryOf(temp, resumed, join(temp.home, 'export-import-resumed')), importedWhole)

  // migrate --to DIR: the same.
  const target = join(temp.home, 'migrate-whole')
  const complete = await engram(temp, ['migrate', '--to', target, '--home', source])
  assert.equal(complete.code, 0, JSON.stringify(complete.envelope))
  const resumedTarget = join(temp.home, 'migrate-resumed')
  const interrupted = await engram(temp, ['migrate', '--to', resumedTarget, '--home', source], stopAtImport)
  assertInterrupted(interrupted, 'migrate', /engram migrate --to .* again/)
  assertNoLockFiles(source, 'interrupted migrate (source)')
  assertNoLockFiles(resumedTarget, 'interrupted migrate (target)')
  const rest = await engram(temp, ['migrate', '--to', resumedTarget, '--home', source])
  assert.equal(rest.code, 0, JSON.stringify(rest.envelope))
  assert.equal(rest.envelope.data.status, 'complete')
  assert.deepEqual(await memoryOf(temp, resumedTarget, join(temp.home, 'export-migrate-resumed')), await memoryOf(temp, target, join(temp.home, 'export-migrate-whole')))
})
