/**
 * The contention scenario of decision 0027, shared by `test/memorize-contention.test.ts` and
 * `scripts/bench/robustness/contention.ts`: agent processes (`memorize-child.ts`) that call the
 * `memorize` tool on one home, and a check of the memory files they leave, against what each call
 * reported.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { type MemoryFileKind, parseMemoryFile, problemsOf } from '../../../core/markdown-entry.ts'
import { engramFileLockName } from '../../../storage/files/engram-store.ts'
import { homeLayout } from '../../../storage/home-layout.ts'

const CHILD = join(import.meta.dirname, 'memorize-child.ts')
const HOLD_LOCK = join(import.meta.dirname, '../../../storage/files/test-support/hold-lock.ts')
const KINDS = ['lesson', 'always', 'never', 'when'] as const

/** What one call of one worker saves, for whom, and the files it must end up in (home-relative). */
export interface PlannedCall {
  /** `w<worker>-m<i>`, or `s-m<i>` for a text every worker saves. */
  ref: string
  user: string | undefined
  entry: { text: string; kind: string; topic?: string }
  files: string[]
}

/**
 * Call `i` of `worker`. Its kind cycles through lesson (filed under one of three topics every
 * other time), always, never and when. With `users`, call i is made in a session of user
 * `u<i % 3>`, every fifth one in a session without a user (the agent's), and every fiftieth (from
 * the seventh) is a profile fact of the user. With `sharedEvery` N, every Nth call saves a text
 * all workers save.
 */
export function memorizeCall(worker: number, i: number, owners: 'agent' | 'users', sharedEvery = 0): PlannedCall {
  const ref = sharedEvery > 0 && i % sharedEvery === sharedEvery - 1 ? `s-m${i}` : `w${worker}-m${i}`
  const user = owners === 'agent' || i % 5 === 4 ? undefined : `u${i % 3}`
  const tree = user === undefined ? 'agents/default/memory' : `agents/default/users/${user}/memory`
  if (user !== undefined && i % 50 === 7) {
    return { ref, user, entry: { text: `Ref-${ref}: handled`, kind: 'profile' }, files: [`shared/users/${user}.md`] }
  }
  const kind = KINDS[i % KINDS.length] as (typeof KINDS)[number]
  if (kind === 'when') return { ref, user, entry: { text: `when ref-${ref} arrives, then file it`, kind }, files: [`${tree}/rules.md`] }
  if (kind !== 'lesson') return { ref, user, entry: { text: `ref-${ref} keep the invoices of batch ${i} apart`, kind }, files: [`${tree}/rules.md`] }
  const topic = i % 8 === 0 ? `batch-${i % 3}` : undefined
  return {
    ref,
    user,
    entry: { text: `ref-${ref}: the invoices of batch ${i} are kept apart`, kind, ...(topic ? { topic } : {}) },
    files: [`${tree}/lessons.md`, ...(topic ? [`${tree}/topics/${topic}.md`] : [])],
  }
}

/** What one child process reports: the calls that said saved, the ones that said duplicate. */
export interface ChildTally {
  worker: number
  saved: number[]
  /** Wall-clock time (Date.now()) each saved call returned, in the order of `saved`. */
  savedAt: number[]
  duplicates: number[]
  rejected: number
  /** The first few reasons for a rejected call. */
  reasons: string[]
  /** Time the calls took in the child, ms (after its mind opened). */
  ms: number
}

export interface MemorizersOptions {
  home: string
  env: Record<string, string>
  workers: number
  count: number
  how: 'in-flight' | 'sequential'
  owners: 'agent' | 'users'
  sharedEvery?: number
  /** A home and environment per worker (processes on several hosts sharing a database); default `home` and `env` for all. */
  hostOf?: (worker: number) => { home: string; env: Record<string, string> }
}

/** A started child: its tally once it exits (rejects on a non-zero exit), and its pid. */
export function startMemorizer(options: MemorizersOptions, worker: number): { pid: number | undefined; done: Promise<ChildTally> } {
  const where = options.hostOf?.(worker) ?? { home: options.home, env: options.env }
  const args = [CHILD, where.home, String(worker), String(options.count), options.how, options.owners, String(options.sharedEvery ?? 0)]
  const child = spawn(process.execPath, args, { env: where.env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const done = new Promise<ChildTally>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (code === 0) resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ChildTally)
      else reject(new Error(`memorize child ${worker} exited with ${code ?? signal}: ${stderr.slice(-2000)}`))
    })
  })
  return { pid: child.pid, done }
}

/** Runs `workers` children at once; resolves with their tallies and the wall time of the whole run. */
export async function runMemorizers(options: MemorizersOptions): Promise<{ ms: number; tallies: ChildTally[] }> {
  const started = performance.now()
  const tallies = await Promise.all(Array.from({ length: options.workers }, (_, worker) => startMemorizer(options, worker).done))
  return { ms: performance.now() - started, tallies }
}

export interface ContentionCheck {
  /** Calls that reported saved / duplicate / rejected, over all workers. */
  saved: number
  duplicates: number
  rejected: number
  /** Distinct planned texts. */
  texts: number
  /** Texts found exactly once in each file they belong in, and nowhere else. */
  storedOnce: number
  /** Texts reported saved by a call but not stored (or stored in only some of their files). */
  lost: string[]
  /** Texts stored more than once, or in a file they do not belong in. */
  misplaced: string[]
  /** Texts whose reports disagree with the files: stored but no call said saved, or two calls said saved. */
  dishonest: string[]
  /** Lines a memory file could not parse, as `file:line`. */
  problems: string[]
}

function markdownFiles(root: string, dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'archive') continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) markdownFiles(root, path, out)
    else if (entry.isFile() && entry.name.endsWith('.md')) out.push(relative(root, path).split(sep).join('/'))
  }
}

function kindOfFile(file: string): MemoryFileKind | undefined {
  if (file.endsWith('/memory/rules.md')) return 'rules'
  if (file.endsWith('/memory/lessons.md')) return 'lessons'
  if (/\/memory\/topics\/[^/]+\.md$/.test(file)) return 'topic'
  return undefined
}

/** Reads every memory file of `home` and checks it against the plan and what the children reported. */
export function checkContention(home: string, options: MemorizersOptions, tallies: ChildTally[]): ContentionCheck {
  const planned = new Map<string, PlannedCall>()
  const reportedSaved = new Map<string, number>()
  for (let worker = 0; worker < options.workers; worker++) {
    for (let i = 0; i < options.count; i++) {
      const call = memorizeCall(worker, i, options.owners, options.sharedEvery ?? 0)
      planned.set(call.ref, call)
    }
  }
  for (const tally of tallies) {
    for (const i of tally.saved) {
      const { ref } = memorizeCall(tally.worker, i, options.owners, options.sharedEvery ?? 0)
      reportedSaved.set(ref, (reportedSaved.get(ref) ?? 0) + 1)
    }
  }

  const found = new Map<string, string[]>()
  const problems: string[] = []
  const files: string[] = []
  markdownFiles(home, home, files)
  for (const file of files) {
    const text = readFileSync(join(home, file), 'utf8')
    const kind = kindOfFile(file)
    if (kind) for (const problem of problemsOf(parseMemoryFile(text, kind))) problems.push(`${file}:${problem.line}`)
    for (const match of text.matchAll(/ref-((?:w\d+|s)-m\d+)\b/gi)) {
      const ref = (match[1] as string).toLowerCase()
      found.set(ref, [...(found.get(ref) ?? []), file])
    }
  }

  const check: ContentionCheck = {
    saved: tallies.reduce((sum, tally) => sum + tally.saved.length, 0),
    duplicates: tallies.reduce((sum, tally) => sum + tally.duplicates.length, 0),
    rejected: tallies.reduce((sum, tally) => sum + tally.rejected, 0),
    texts: planned.size,
    storedOnce: 0,
    lost: [],
    misplaced: [],
    dishonest: [],
    problems,
  }
  for (const [ref, call] of planned) {
    const where = (found.get(ref) ?? []).sort()
    const expected = [...call.files].sort()
    const saidSaved = reportedSaved.get(ref) ?? 0
    if (where.join('\n') === expected.join('\n')) check.storedOnce++
    else if (where.length > expected.length || where.some((file) => !expected.includes(file))) check.misplaced.push(ref)
    if (saidSaved > 0 && expected.some((file) => !where.includes(file))) check.lost.push(ref)
    if ((where.length > 0 && saidSaved === 0) || saidSaved > 1) check.dishonest.push(ref)
  }
  for (const ref of found.keys()) if (!planned.has(ref)) check.misplaced.push(ref)
  return check
}

export interface KilledHolderRun {
  /** From the SIGKILL (or release) to the first rule saved by a waiting process, ms. */
  handoverMs: number
  /** From the SIGKILL (or release) to the moment every waiting process had saved its first rule, ms. */
  allWaitersMs: number
  check: ContentionCheck
}

/**
 * A process holds the lock of the agent's rules.md (as a writer does mid-write) while `workers`
 * memorizers start; once every one of them has saved a lesson (so its rules wait for that lock),
 * the holder is SIGKILLed — or, with `graceful`, releases the lock as a finished write does (the
 * control: what the waiters' own work costs after any release). Measures how long the waiters stay
 * blocked after it.
 */
export async function runKilledHolder(options: Omit<MemorizersOptions, 'how' | 'owners'> & { graceful?: boolean }): Promise<KilledHolderRun> {
  const layout = homeLayout(options.home, 'default')
  const lockName = engramFileLockName(join(options.home, 'agents', 'default', 'memory'), 'rules')
  const args = [HOLD_LOCK, layout.locksDir, lockName, ...(options.graceful ? ['release-on-sigterm'] : [])]
  const holder = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  const holderExited = new Promise((resolve) => holder.once('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    holder.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve()
    })
    holder.once('exit', (code) => reject(new Error(`the lock holder exited early with ${code}`)))
  })
  const run: MemorizersOptions = { home: options.home, env: options.env, workers: options.workers, count: options.count, how: 'in-flight', owners: 'agent' }
  const children = Array.from({ length: options.workers }, (_, worker) => startMemorizer(run, worker))
  const done = Promise.all(children.map((child) => child.done))
  done.catch(() => holder.kill('SIGKILL'))
  const lessons = join(options.home, 'agents', 'default', 'memory', 'lessons.md')
  const started = performance.now()
  for (;;) {
    const text = existsSync(lessons) ? readFileSync(lessons, 'utf8') : ''
    if (Array.from({ length: options.workers }, (_, worker) => text.includes(`ref-w${worker}-m0:`)).every(Boolean)) break
    if (performance.now() - started > 120_000) {
      holder.kill('SIGKILL')
      throw new Error('the memorizers did not start within 120 s')
    }
    await sleep(50)
  }
  // Their rules are queued on the held lock now; give them a moment to be retrying.
  await sleep(300)
  const killedAt = Date.now()
  holder.kill(options.graceful ? 'SIGTERM' : 'SIGKILL')
  await holderExited
  const tallies = await done
  const firstRuleSaves = tallies.map((tally) => {
    const times = tally.saved.flatMap((i, n) => (memorizeCall(tally.worker, i, 'agent').files[0]?.endsWith('/rules.md') ? [tally.savedAt[n] as number] : []))
    return Math.min(...times)
  })
  return {
    handoverMs: Math.min(...firstRuleSaves) - killedAt,
    allWaitersMs: Math.max(...firstRuleSaves) - killedAt,
    check: checkContention(options.home, run, tallies),
  }
}
