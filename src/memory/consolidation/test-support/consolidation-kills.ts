/**
 * Consolidation killed at random points (decision 0053), shared by
 * test/consolidation-kill.test.ts and `npm run bench -- robustness/consolidation-kills`.
 *
 * A small home is built once: two users whose sessions of the day wrote episodes (Ada moved the
 * staging deploys from Kamal to Fly.io; Bob's standup moved), Ada's fact and procedure about
 * Kamal, two near-identical facts of Ada's about tea, and two facts of Bob's about when the office
 * opens that contradict each other, and old days of episodes of both. One consolidation of it, daily then weekly
 * (`consolidate-child.ts`, a process of its own, a fixed instant, the fake model server answering
 * by what it is asked), writes linked documents: a distilled procedure, the Kamal procedure
 * reconsolidated to version 2, a fact superseding the Kamal fact (`supersedes` / `superseded_by`),
 * Bob's new fact, the tea facts merged (one to `archive/merged/` with `merged_into`), Bob's office
 * facts resolved by the weekly scan, old episode days compressed — with their versions, version
 * log and activity records.
 *
 * Each trial copies the home, starts the child, kills it with SIGKILL after a random delay, runs
 * the child again in a fresh process (the recovery run), and compares the home with the home of an
 * unkilled run byte for byte (`compareTrees`: every file of the agent's and users' trees and the
 * shared tree; not the SQLite databases and lock files, whose bytes depend on the process history
 * and not on what is remembered).
 */
import { spawn } from 'node:child_process'
import { cpSync, type FSWatcher, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, watch } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ManualClock } from '../../../core/clock.ts'
import { ownerOfUser } from '../../../core/owner.ts'
import { openMindInternals } from '../../../mind-internals.ts'
import type { FakeChatRequest, FakeChatStep } from '../../../testing/fake-openai-server.ts'
import { seededRandom } from '../../../test-support/seeded-random.ts'

const CHILD = fileURLToPath(new URL('./consolidate-child.ts', import.meta.url))

/** When the home was lived in, and when it is consolidated (the same day and ISO week). */
export const LIVED_AT = '2026-03-04T09:00:00.000Z'
export const CONSOLIDATED_AT = '2026-03-04T18:00:00.000Z'

/** The settings of every mind of the scenario: the fake model, no background work. */
export function consolidationSettings(url: string): Record<string, unknown> {
  return { 'llm.provider': 'openai-compatible', 'llm.baseUrl': url, 'llm.model': 'fake-model', 'llm.maxRetries': 0, 'jobs.eager': false }
}

const schemaName = (request: FakeChatRequest): string =>
  (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'

const asked = (request: FakeChatRequest): string => request.messages.map((message) => message.content).join('\n')

/** The fake model: each answer depends only on what it is asked, so every run is asked and answers alike. */
export function consolidationModel(request: FakeChatRequest): FakeChatStep {
  const text = asked(request)
  switch (schemaName(request)) {
    case 'episode': {
      const said = [...text.matchAll(/(?:user|ada|bob)[^:\n]*: (.+)/gi)].map((m) => m[1]).join(' ')
      return { json: { title: 'Conversation', summary: said || 'They talked.', resolved: [], newTasks: [] } }
    }
    case 'procedures':
      return { json: { procedures: [{ title: 'Deploy staging with Fly', description: 'Deploy the staging server with Fly.io', steps: ['Run the tests', 'Run fly deploy on the staging server'] }] } }
    case 'knowledge':
      if (/Fly\.io/.test(text)) return { json: { items: [{ title: 'Staging deploys', content: 'The staging server is deployed with Fly.io now.', sources: [1] }] } }
      if (/standup/i.test(text)) return { json: { items: [{ title: 'Standup time', content: 'The team standup is at 10am now.', sources: [1] }] } }
      return { json: { items: [] } }
    case 'knowledge_check':
      return { json: { supported: true, reason: 'stated in section 1' } }
    case 'reconsolidation':
      if (/Existing procedure/.test(text) && /kamal deploy/i.test(text) && /Fly\.io/.test(text)) return { json: { update: true, reason: 'deploys moved to Fly.io', content: '# Deploy staging\n\n1. Run the tests\n2. Run fly deploy on the staging server' } }
      return { json: { update: false, reason: 'still true' } }
    case 'contradiction':
      if (/Fly\.io/.test(text) && /Kamal/.test(text)) return { json: { relation: 'contradiction', strategy: 'supersede', reason: 'the deploy tool changed' } }
      if (/opens at 9/.test(text) && /opens at 8/.test(text)) return { json: { relation: 'contradiction', strategy: 'supersede', reason: 'the opening hour changed' } }
      return { json: { relation: 'unrelated', reason: 'different topics' } }
    case 'merge':
      return { json: { content: 'Ada drinks green tea every afternoon at the office.' } }
    default:
      return { json: { summary: 'A summary.' } }
  }
}

const dated = (days: number): string => new Date(Date.parse(LIVED_AT) - days * 86_400_000).toISOString()

/** Builds the scenario's home in `home` (see the module comment), with the fake model at `url`. */
export async function buildHome(home: string, env: Record<string, string>, url: string): Promise<void> {
  const clock = new ManualClock(LIVED_AT)
  const mind = await openMindInternals({ home, env, ignoreConfigFile: true, clock, settings: consolidationSettings(url) })
  try {
    const talk = async (session: string, user: string, message: string): Promise<void> => {
      const s = mind.session(session, { user })
      const turn = await s.begin(message)
      clock.advance(5_000)
      await s.end(turn, 'Noted.')
      await s.close()
      await mind.idle()
    }
    await talk('ada-1', 'ada', 'We moved the staging deploys from Kamal to Fly.io. To deploy: first run the tests, then run fly deploy on the staging server.')
    await talk('bob-1', 'bob', 'The team standup moved to 10am, starting today.')
    // The sessions' episodes are written here (and the day's scheduled work finds nothing yet).
    await mind.maintain()
    const ada = mind.backend.owned(ownerOfUser('ada')).documents
    const bob = mind.backend.owned(ownerOfUser('bob')).documents
    const fact = (days: number) => ({ created_at: dated(days), updated_at: dated(days), valid_from: dated(days), confidence: 0.7, version: 1, auto_consolidated: true })
    await ada.write('knowledge', 'staging-deploys', fact(20), '# Staging deploys\n\nThe staging server is deployed with Kamal.\n')
    await ada.write(
      'procedure',
      'deploy-staging',
      { description: 'Deploy the staging server with Kamal', confidence: 0.4, success_count: 0, failure_count: 0, version: 1, created_at: dated(20), updated_at: dated(20), auto_distilled: true, protected: false },
      '# Deploy staging\n\n1. Run the tests\n2. Run kamal deploy on the staging server\n',
    )
    await ada.write('knowledge', 'tea-habit', fact(12), '# Tea\n\nAda drinks green tea every afternoon at the office.\n')
    await ada.write('knowledge', 'tea-habits', fact(10), '# Tea\n\nAda drinks green tea every afternoon in the office.\n')
    await bob.write('knowledge', 'office-hours', fact(30), '# Office hours\n\nThe office opens at 9 every weekday.\n')
    await bob.write('knowledge', 'office-opening', fact(5), '# Office hours\n\nThe office opens at 8 every weekday.\n')
    // Old days of episodes, which the weekly run compresses (each file: a record, then the write).
    const section = (time: string, topic: string): string =>
      `## ${time} — ${topic}\n\n${topic} took the whole meeting. The budget came first, line by line, with every quote we had. Then the venue, the rooms and the travel days of each team. Lunch was last, and it ran long because nobody agreed on the place. We left with a list of open questions for next time.\n`
    for (const [documents, days] of [[ada, [45, 44, 43]], [bob, [41, 40]]] as const) {
      for (const days_ of days) {
        const day = dated(days_).slice(0, 10)
        await documents.write('episode', day, { date: day }, `# ${day}\n\n${section('10:00', 'Offsite planning')}\n${section('15:00', 'Deploy review')}`)
      }
    }
  } finally {
    await mind.close()
  }
}

export interface ChildRun {
  code: number | null
  signal: string | null
  /** Wall clock (epoch ms) when consolidation began in the child, if it got there. */
  startedAt: number | undefined
  /** Milliseconds from the start of consolidation to the child's exit. */
  ms: number | undefined
  killed: boolean
  stderr: string
}

/**
 * When to kill: that long after consolidation began; after the first file it wrote in the users'
 * trees was seen; or that long after the model server had received `count` more requests (each
 * unit is written right after its last model call).
 */
export type KillPoint = { afterStartMs: number } | { afterFirstWriteMs: number } | { afterRequests: { count: number; seen: () => number }; thenMs: number }

/** What a kill trial runs: how its home is built, and the child (a script taking `<home> <model-url> <instant>`) run at `instant`. */
export interface KillScenario {
  build(home: string, env: Record<string, string>, url: string): Promise<void>
  child: string
  instant: string
}

/** The daily and weekly consolidation of the module comment. */
const DAILY_WEEKLY: KillScenario = { build: buildHome, child: CHILD, instant: CONSOLIDATED_AT }

/** Runs the child on `home`; with `kill`, SIGKILLs it at that point. */
export function runChild(home: string, env: Record<string, string>, url: string, kill?: KillPoint, scenario: KillScenario = DAILY_WEEKLY): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [scenario.child, home, url, scenario.instant], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let startedAt: number | undefined
    let killed = false
    let watcher: FSWatcher | undefined
    const killIn = (ms: number): void => {
      setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) {
          killed = true
          child.kill('SIGKILL')
        }
      }, ms)
    }
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
      const started = /started (\d+)/.exec(stdout)
      if (startedAt === undefined && started) {
        startedAt = Date.now()
        if (kill && 'afterStartMs' in kill) killIn(kill.afterStartMs)
        if (kill && 'afterRequests' in kill) {
          const target = kill.afterRequests.seen() + kill.afterRequests.count
          const poll = setInterval(() => {
            if (child.exitCode !== null || child.signalCode !== null) clearInterval(poll)
            else if (kill.afterRequests.seen() >= target) {
              clearInterval(poll)
              killIn(kill.thenMs)
            }
          }, 1)
        }
        if (kill && 'afterFirstWriteMs' in kill) {
          // The users' trees change only when consolidation writes (the plan is its first write).
          watcher = watch(join(home, 'agents', 'default', 'users'), { recursive: true }, () => {
            watcher?.close()
            watcher = undefined
            killIn(kill.afterFirstWriteMs)
          })
        }
      }
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      watcher?.close()
      resolve({ code, signal, startedAt, ms: startedAt === undefined ? undefined : Date.now() - startedAt, killed, stderr: stderr.slice(-4000) })
    })
  })
}

/**
 * Whether a file's bytes are compared. Not compared: SQLite databases with their WAL and
 * rollback files (page layout, free pages and WAL frames depend on the process history: a killed
 * process's frames, a checkpoint that ran or not; what they hold of consolidation — which
 * sections are done — is checked by the recovery doing nothing twice), and lock files (kernel
 * locks' carrier files and waiting stamps, which say who waited, not what is remembered).
 */
export function compared(path: string): boolean {
  return !/\.(db|db-wal|db-shm|db-journal|sqlite|sqlite-wal|sqlite-shm)$/.test(path) && !path.startsWith('.locks/')
}

/** Every compared file under `home`, by its path relative to `home`. */
export function treeFiles(home: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>()
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      const info = lstatSync(path)
      const rel = relative(home, path).split('\\').join('/')
      if (info.isDirectory()) walk(path)
      else if (compared(rel)) files.set(rel, readFileSync(path))
    }
  }
  walk(home)
  return files
}

/** The paths whose bytes differ between two trees (missing on one side included), sorted. */
export function compareTrees(expected: Map<string, Buffer>, actual: Map<string, Buffer>): string[] {
  const differ: string[] = []
  for (const [path, bytes] of expected) if (!actual.get(path)?.equals(bytes)) differ.push(actual.has(path) ? path : `${path} (missing)`)
  for (const path of actual.keys()) if (!expected.has(path)) differ.push(`${path} (extra)`)
  return differ.sort()
}

export interface KillTrial {
  /** What the delay counts from. */
  point: string
  delayMs: number
  /** Where the kill left the home: `untouched` (as built), `partial`, `complete` (as an unkilled run), `not-killed` (the child had finished). */
  leftAt: 'untouched' | 'partial' | 'complete' | 'not-killed'
  /** Files that differ from the unkilled run's after the recovery run. */
  differ: string[]
  recoveryCode: number | null
  recoveryStderr: string
}

export interface KillRun {
  seed: number
  /** The unkilled run's consolidation time, ms. */
  unkilledMs: number
  /** Files of the unkilled run's home that consolidation changed or added. */
  written: number
  trials: KillTrial[]
}

/**
 * Builds the home, runs it unkilled once, then `kills` trials (see the module comment). Kill
 * points: one trial in three uniform over the unkilled run's consolidation time; the others a
 * random time after the child's first write was seen, within the span over which the unkilled
 * run wrote its files (their modification times), so that most kills land among the writes and
 * not in the model calls before them.
 */
export async function runKillTrials(options: { dir: string; env: Record<string, string>; url: string; kills: number; seed: number; scenario?: KillScenario; onTrial?: (trial: KillTrial, index: number) => void }): Promise<KillRun> {
  const { dir, env, url } = options
  const scenario = options.scenario ?? DAILY_WEEKLY
  const base = join(dir, 'base')
  mkdirSync(base, { recursive: true })
  await scenario.build(base, env, url)
  const before = treeFiles(base)

  const reference = join(dir, 'unkilled')
  cpSync(base, reference, { recursive: true })
  const unkilled = await runChild(reference, env, url, undefined, scenario)
  if (unkilled.code !== 0 || unkilled.startedAt === undefined || unkilled.ms === undefined) throw new Error(`the unkilled run failed (${unkilled.code}): ${unkilled.stderr}`)
  const expected = treeFiles(reference)
  const changed = [...expected.keys()].filter((path) => !before.get(path)?.equals(expected.get(path) as Buffer))
  const writeTimes = changed.map((path) => lstatSync(join(reference, path)).mtimeMs)
  const writeSpan = Math.max(20, Math.max(...writeTimes) - Math.min(...writeTimes))

  const random = seededRandom(options.seed)
  const trials: KillTrial[] = []
  for (let i = 0; i < options.kills; i++) {
    const home = join(dir, `trial-${i}`)
    let point: KillPoint = i % 3 === 0 ? { afterStartMs: Math.round(random() * unkilled.ms) } : { afterFirstWriteMs: Math.round(random() * writeSpan * 1.2) }
    let killed: ChildRun
    // A child faster than the unkilled run may finish before its kill: tried again on a fresh copy
    // with the delay scaled down (at most four times), so that each trial is a kill.
    for (let attempt = 0; ; attempt++) {
      rmSync(home, { recursive: true, force: true })
      cpSync(base, home, { recursive: true })
      killed = await runChild(home, env, url, point, scenario)
      if (killed.killed || attempt === 4) break
      point = 'afterStartMs' in point ? { afterStartMs: Math.round(point.afterStartMs * 0.7) } : { afterFirstWriteMs: Math.round(point.afterFirstWriteMs * 0.5) }
    }
    const delayMs = 'afterStartMs' in point ? point.afterStartMs : point.afterFirstWriteMs
    const left = treeFiles(home)
    const leftAt: KillTrial['leftAt'] = !killed.killed ? 'not-killed' : compareTrees(before, left).length === 0 ? 'untouched' : compareTrees(expected, left).length === 0 ? 'complete' : 'partial'
    const recovery = await runChild(home, env, url, undefined, scenario)
    const trial: KillTrial = { point: 'afterStartMs' in point ? 'after start' : 'after first write', delayMs, leftAt, differ: compareTrees(expected, treeFiles(home)), recoveryCode: recovery.code, recoveryStderr: recovery.code === 0 ? '' : recovery.stderr }
    trials.push(trial)
    options.onTrial?.(trial, i)
  }
  return { seed: options.seed, unkilledMs: unkilled.ms, written: changed.length, trials }
}
