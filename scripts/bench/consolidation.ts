/**
 * Benchmark: growth over a simulated year (decisions 0030 and 0031). An agent with a few users lives
 * through `--days` days of `--turns-per-day` turns on a manual clock, through the public API only
 * (`createMind`, `mind.session` → `begin` / `execute` / `end`, `mind.context`, `mind.scope(user)`,
 * and `mind.maintain()` as a host runs it), offline (no LLM, the default offline embedder), in a
 * temp home. Month by month it reports the units in the active index by kind, the memory files in
 * the archive folders of the home, the knowledge and procedure documents live, and the wall time of
 * the `maintain()` calls that ran the consolidations; then one day of 1,000 turns on the year-old
 * home. Run:
 *
 *   npm run bench -- consolidation [--days 365] [--turns-per-day 200] [--users 4] [--seed 1]
 *                                  [--big-day 1000] [--full-share 0.02] [--keep]
 *   npm run bench -- consolidation --quick          (30 days × 50 turns, a big day of 200: ~20 s)
 *
 * A day: at 03:00 the host calls `maintain()` — the first call of a day runs the daily
 * consolidation job (on Mondays also the weekly integration, on the 1st the monthly forgetting);
 * one day a week it is called again at once, with nothing due (the baseline: what every
 * `maintain()` costs, the reindex it ends with included); from 08:00 the users talk in sessions of
 * 20–30 turns with 15 quiet minutes between them; at 23:00 `maintain()` closes the idle sessions
 * (their episodes) with no consolidation due.
 *
 * The turns (seeded, so runs replay): facts users state and change ("my budget is now 40k", "I
 * moved to Lisbon"), some said again word for word; preferences memorized through `memorize`;
 * questions, some with a `search_memory` call for a note written earlier (the popular notes far
 * more often, so that those stay active and the rest can be forgotten); tool work through a host
 * tool (one call in ten fails); notes and procedures written and rewritten through
 * `write_memory_file`; outcomes of procedures through `report_procedure_outcome`.
 *
 * Two paths, so that a year of 200 turns a day runs in about 15 minutes on 2 cores: every fact and
 * `--full-share` of the other turns go through `begin` → tool → `end` (the agent path: the
 * message stored, context assembled, memory primed, the turn's background work); the others store
 * what such a turn stores — the message and the reply in the conversation (`mind.context.append`,
 * a session's cheap turns appended together), both in the user's activity log (what episodes are
 * made of), the tool call through `session.execute` — without priming or assembly. With
 * `--full-share 1` every turn takes the agent path, priming over the whole growing index each time
 * (much slower).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { z } from 'zod'
import { isoDay, ManualClock } from '../../src/core/clock.ts'
import type { MessageInput } from '../../src/core/message.ts'
import type { Logger } from '../../src/core/logger.ts'
import { createMind, type MaintenanceReport, type Mind } from '../../src/mind.ts'
import type { Session, SessionOptions } from '../../src/session/session.ts'
import { seededRandom } from '../../src/testing/seeded-random.ts'
import { makeVocabulary, zipfSampler } from './synthetic-memories.ts'

const { values } = parseArgs({
  options: {
    days: { type: 'string' },
    'turns-per-day': { type: 'string' },
    users: { type: 'string', default: '4' },
    seed: { type: 'string', default: '1' },
    'big-day': { type: 'string' },
    'full-share': { type: 'string', default: '0.02' },
    quick: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
})
const quick = values.quick === true
const days = Number(values.days ?? (quick ? 30 : 365))
const turnsPerDay = Number(values['turns-per-day'] ?? (quick ? 50 : 200))
const bigDay = Number(values['big-day'] ?? (quick ? 200 : 1000))
const userCount = Number(values.users)
const seed = Number(values.seed)
const fullShare = Number(values['full-share'])
if (!(fullShare >= 0 && fullShare <= 1)) throw new Error('--full-share must be between 0 and 1')
for (const [name, value] of Object.entries({ days, turnsPerDay, bigDay, userCount, seed })) {
  if (!Number.isInteger(value) || value < (name === 'seed' || name === 'bigDay' ? 0 : 1)) throw new Error(`--${name} must be a whole number`)
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const SESSION_TURNS = 25
/** Between two sessions: longer than the 10 minutes after which a session is idle and closed. */
const QUIET = 15 * MINUTE
const START = Date.parse('2026-01-01T00:00:00Z')

const dir = mkdtempSync(join(tmpdir(), 'engram-bench-consolidation-'))
const home = join(dir, 'home')
const env = { HOME: join(dir, 'user-home'), PATH: process.env.PATH ?? '' }
const clock = new ManualClock(START)
/** Time never runs back: a host's calls come in order. */
const moveClockTo = (at: number): void => {
  if (at < clock.now().getTime()) throw new Error(`the simulated day ran past ${new Date(at).toISOString()}`)
  clock.set(at)
}
// engram's warnings are counted (and the first few shown at the end), not streamed over the table.
const warnings: string[] = []
const logger: Logger = {
  error: (_fields, message) => void warnings.push(`error: ${message}`),
  warn: (_fields, message) => void warnings.push(message),
  info: () => {},
  debug: () => {},
}

// ── What people say ─────────────────────────────────────────────────────────────────────────────
const random = seededRandom(seed)
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
const chance = (p: number): boolean => random() < p
const CONTENT =
  'invoice billing export deploy staging vault cache limit batch migration report hiring budget ledger refund customer contract schema backup incident alert dashboard release roadmap vendor payroll audit forecast quota latency timeout retry queue webhook token certificate cluster replica snapshot index query pipeline sprint review design spec draft launch pricing churn onboarding survey training laptop office travel visa flight hotel dinner meeting agenda minutes summary proposal estimate'.split(
    ' ',
  )
const vocabulary = makeVocabulary(4000, random, CONTENT)
const nextWord = zipfSampler(vocabulary.length, 1.05, random)
const sentence = (min: number, max: number): string => {
  const n = min + Math.floor(random() * (max - min + 1))
  const words: string[] = []
  for (let i = 0; i < n; i++) words.push(vocabulary[nextWord()] as string)
  const text = words.join(' ')
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`
}
const CITIES = ['Lisbon', 'Porto', 'Berlin', 'Madrid', 'Oslo', 'Dublin', 'Vienna', 'Prague', 'Warsaw', 'Athens', 'Milan', 'Lyon']
const DRINKS = ['tea', 'coffee', 'sparkling water', 'matcha', 'espresso']
const FORMATS = ['bullet points', 'short paragraphs', 'tables', 'one-line answers']
const USERS = ['ada', 'bob', 'chen', 'dana', 'emil', 'farah', 'goran', 'hana'].slice(0, Math.min(userCount, 8))
for (let i = USERS.length; i < userCount; i++) USERS.push(`user-${i}`)

/** What each user last said about themselves, to say it again word for word now and then. */
const saidFacts = new Map<string, string[]>()
function factOf(user: string): string {
  const said = saidFacts.get(user) ?? []
  if (said.length > 0 && chance(0.3)) {
    counts.factRepeats++
    return pick(said)
  }
  const fact = pick([
    () => `My budget is now ${10 + Math.floor(random() * 90)}k.`,
    () => `I moved to ${pick(CITIES)}.`,
    () => `I'm now based in ${pick(CITIES)}.`,
    () => `My budget is ${10 + Math.floor(random() * 90)}k for the ${pick(CONTENT)} project.`,
    () => `I prefer ${pick(FORMATS)} when you summarise things.`,
  ])()
  said.push(fact)
  if (said.length > 8) said.shift()
  saidFacts.set(user, said)
  return fact
}

/** A note the agent wrote: its path, its topic words (its search terms) and how many times it was rewritten. */
interface Note {
  path: string
  owner: 'user' | 'agent'
  user: string
  topic: string
  kind: 'knowledge' | 'procedure'
  versions: number
  /** What was last written (a duplicate copies it). */
  content: string
}
const notes: Note[] = []
// Notes asked about: the head of a Zipf law over the notes in the order they were written, so a
// few (the early ones) are asked about again and again and most are soon left alone.
const noteRank = zipfSampler(20_000, 1.1, random)

function noteText(note: Note): string {
  const lines = [`# ${note.topic}`, '', sentence(8, 18), sentence(8, 18)]
  if (note.kind === 'procedure') lines.push('', `1. ${sentence(4, 8)}`, `2. ${sentence(4, 8)}`, `3. check the ${note.topic} ${pick(CONTENT)}`)
  else lines.push('', `The ${note.topic} ${pick(CONTENT)} is ${Math.floor(random() * 1000)} (version ${note.versions}).`)
  return `${lines.join('\n')}\n`
}

// ── The host's own tool ─────────────────────────────────────────────────────────────────────────
const runTask: NonNullable<SessionOptions['tools']>[number] = {
  name: 'run_task',
  description: 'Run a named task of the workspace (reports, exports, deploys) and return its output.',
  inputSchema: z.object({ task: z.string(), target: z.string() }) as z.ZodType<unknown>,
  async run(input) {
    const { task, target } = input as { task: string; target: string }
    if (chance(0.1)) return { isError: true, text: `Task ${task} failed on ${target}: timeout after 30 s.` }
    return { text: `Task ${task} on ${target}: ${1 + Math.floor(random() * 500)} rows, done.` }
  },
}

const counts = { turns: 0, agentPath: 0, facts: 0, memorized: 0, questions: 0, searches: 0, taskCalls: 0, notesWritten: 0, notesRewritten: 0, notesDuplicated: 0, factRepeats: 0, outcomes: 0 }
/** engram tool calls that returned an error, by tool and first line (a procedure forgotten meanwhile is one). */
const toolErrors = new Map<string, number>()
/** Wall time of the turns of each path, this month (reset by the month loop). */
const turnTime = { full: 0, fullTurns: 0, light: 0, lightTurns: 0 }

/** One turn as drawn: what the user says, the tool the agent calls (if any), its reply. */
interface TurnPlan {
  message: string
  call?: { name: string; input: Record<string, unknown>; then?: (ok: boolean) => void }
  reply: (toolResult: string | undefined, failed: boolean) => string
  /** Facts must go through `begin`: the profile is learned from the turns it records. */
  agentPath: boolean
}

/** Draws the next turn of `user`. */
function planTurn(user: string): TurnPlan {
  const r = random()
  const noted = () => 'Noted.'
  if (r < 0.04) {
    counts.facts++
    return { message: `${factOf(user)} ${chance(0.5) ? sentence(4, 10) : ''}`.trim(), reply: noted, agentPath: true }
  }
  const agentPath = chance(fullShare)
  if (r < 0.05) {
    counts.memorized++
    const text = chance(0.5) ? `Preferred drink: ${pick(DRINKS)}` : `Report format: ${pick(FORMATS)}`
    return { message: `Please remember: I like ${pick(DRINKS)} in the morning and ${pick(FORMATS)} in reports.`, call: { name: 'memorize', input: { entries: [{ text, kind: 'profile' }] } }, reply: () => 'I will remember that.', agentPath }
  }
  if (r < 0.09 && notes.length > 0) {
    counts.questions++
    counts.searches++
    const asked = notes[noteRank() % notes.length] as Note
    return { message: `What did we write down about the ${asked.topic}?`, call: { name: 'search_memory', input: { query: asked.topic } }, reply: () => `${sentence(6, 16)} ${sentence(6, 16)}`, agentPath }
  }
  if (r < 0.1) {
    // A note written: a third rewrites an earlier one (its old version is archived), one in ten
    // writes down again, under another name, what an earlier knowledge note says (a duplicate for
    // the weekly merge), the rest are new.
    const own = notes.filter((note) => note.user === user || note.owner === 'agent')
    const draw = random()
    const rewrite = own.length > 0 && draw < 0.33 ? pick(own) : undefined
    const knowledge = own.filter((note) => note.kind === 'knowledge')
    const copied = !rewrite && knowledge.length > 0 && draw < 0.43 ? pick(knowledge) : undefined
    const kind: Note['kind'] = rewrite?.kind ?? (copied || chance(0.75) ? 'knowledge' : 'procedure')
    const note: Note = rewrite ?? {
      path: `${kind === 'knowledge' ? 'knowledge' : 'procedures'}/${kind}-${notes.length}.md`,
      owner: copied?.owner ?? (chance(0.2) ? 'agent' : 'user'),
      user,
      topic: copied?.topic ?? `${vocabulary[1000 + Math.floor(random() * 3000)]} ${pick(CONTENT)} ${notes.length}`,
      kind,
      versions: 0,
      content: '',
    }
    note.versions++
    const content = copied?.content ?? noteText(note)
    const then = (ok: boolean) => {
      if (!ok) return
      note.content = content
      if (rewrite) counts.notesRewritten++
      else {
        if (copied) counts.notesDuplicated++
        else counts.notesWritten++
        notes.push(note)
      }
    }
    return {
      message: `Please write down what we found about the ${note.topic}. ${sentence(4, 10)}`,
      call: { name: 'write_memory_file', input: { path: note.path, content, ...(note.owner === 'agent' ? { owner: 'agent' } : {}) }, then },
      reply: () => 'Written down.',
      agentPath,
    }
  }
  if (r < 0.105) {
    // Following a procedure, and saying how it went (one procedure in three keeps failing: low utility).
    const procedures = notes.filter((note) => note.kind === 'procedure' && (note.user === user || note.owner === 'agent'))
    const procedure = procedures.length > 0 ? pick(procedures) : undefined
    if (!procedure) return { message: `Any procedure for the ${pick(CONTENT)}?`, reply: () => 'None yet.', agentPath }
    counts.outcomes++
    const slug = procedure.path.slice('procedures/'.length, -'.md'.length)
    const failing = Number(slug.split('-')[1]) % 3 === 0
    return {
      message: `Follow the ${procedure.topic} procedure, please.`,
      call: { name: 'report_procedure_outcome', input: { procedure: slug, success: failing ? chance(0.1) : chance(0.9) } },
      reply: () => 'Done, following the steps.',
      agentPath,
    }
  }
  if (r < 0.355) {
    counts.taskCalls++
    const input = { task: pick(['export', 'report', 'deploy', 'backup', 'reconcile']), target: pick(CONTENT) }
    return {
      message: `Can you run the ${input.task} for the ${input.target}? ${sentence(3, 8)}`,
      call: { name: 'run_task', input },
      reply: (result, failed) => (failed ? `The ${input.task} failed: ${result}` : `Done: ${result}`),
      agentPath,
    }
  }
  if (r < 0.605) {
    counts.questions++
    return { message: `What about the ${pick(CONTENT)} and ${sentence(3, 8).toLowerCase()}`, reply: () => `${sentence(6, 16)} ${sentence(6, 16)}`, agentPath }
  }
  return { message: sentence(5, 20), reply: () => sentence(5, 20), agentPath } // small talk
}

/** A session as the bench plays it: the conversation's messages of cheap-path turns wait here for one append. */
interface Conversation {
  id: string
  user: string
  session: Session
  pending: MessageInput[]
}

/** Appends the cheap turns' messages waiting in `conversation`; the time counts for the cheap path. */
async function flush(mind: Mind, conversation: Conversation): Promise<number> {
  if (conversation.pending.length === 0) return 0
  const started = performance.now()
  await mind.context.append({ sessionId: conversation.id, agent: mind.agent, user: conversation.user }, conversation.pending.splice(0))
  const took = performance.now() - started
  turnTime.light += took
  return took
}

/** Calls the turn's tool through the session (as `turn.tools` do), and counts what failed. */
async function callTool(conversation: Conversation, call: NonNullable<TurnPlan['call']>): Promise<{ text: string; failed: boolean }> {
  const result = await conversation.session.execute(call.name, call.input)
  const failed = result.isError === true
  if (failed && call.name !== 'run_task') {
    const key = `${call.name}: ${result.text.split('\n')[0]?.slice(0, 80)}`
    toolErrors.set(key, (toolErrors.get(key) ?? 0) + 1)
  }
  call.then?.(!failed)
  return { text: result.text, failed }
}

/**
 * Plays one turn. The agent path: `begin` (the message stored, the context assembled, memory
 * primed), the tool call, `end` with the call and its result. The cheap path stores what a turn
 * stores — the message and the reply in the conversation (appended together with the session's
 * other cheap turns, before the next `begin` or when the session ends), both in the user's
 * activity log (what episodes are made of), the tool call through `session.execute` — without
 * priming, assembly or the turn's background work.
 */
async function playTurn(mind: Mind, conversation: Conversation, plan: TurnPlan): Promise<void> {
  counts.turns++
  const started = performance.now()
  if (plan.agentPath) {
    counts.agentPath++
    const flushed = await flush(mind, conversation)
    const turn = await conversation.session.begin(plan.message)
    if (!plan.call) await conversation.session.end(turn, plan.reply(undefined, false))
    else {
      const { text, failed } = await callTool(conversation, plan.call)
      const callId = `call-${counts.turns}`
      await conversation.session.end(turn, [
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: callId, toolName: plan.call.name, input: plan.call.input }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: callId, toolName: plan.call.name, output: { type: 'text', value: text } }] },
        { role: 'assistant', content: plan.reply(text, failed) },
      ])
    }
    turnTime.full += performance.now() - started - flushed
    turnTime.fullTurns++
    return
  }
  const at = mind.clock.now().toISOString()
  const activity = mind.scope(conversation.user).activity
  await activity.messageReceived(plan.message, { session: conversation.id, from: conversation.user })
  const result = plan.call ? await callTool(conversation, plan.call) : undefined
  const said = plan.reply(result?.text, result?.failed ?? false)
  conversation.pending.push({ role: 'user', content: plan.message, at, name: conversation.user }, { role: 'assistant', content: said, at })
  await activity.responseSent(said, { session: conversation.id, to: conversation.user })
  turnTime.light += performance.now() - started
  turnTime.lightTurns++
}

/**
 * The day's sessions from 08:00: users take turns in sessions of ~25 turns, 15 quiet minutes after
 * each (past the 10-minute idle boundary); turns 2 minutes apart, closer on a long day so that it
 * ends by about 21:00.
 */
async function liveDay(mind: Mind, day: number, turns: number): Promise<number> {
  moveClockTo(START + day * DAY + 8 * HOUR)
  const quietTime = Math.ceil(turns / SESSION_TURNS) * QUIET
  const gap = Math.min(2 * MINUTE, Math.floor((13 * HOUR - quietTime) / turns))
  const started = performance.now()
  let done = 0
  for (let s = 0; done < turns; s++) {
    const user = pick(USERS)
    const id = `${user}-d${day}-s${s}`
    const conversation: Conversation = { id, user, session: mind.session(id, { user, tools: [runTask] }), pending: [] }
    const length = Math.min(turns - done, SESSION_TURNS - 5 + Math.floor(random() * 11))
    for (let i = 0; i < length; i++) {
      await playTurn(mind, conversation, planTurn(user))
      clock.advance(gap)
    }
    await flush(mind, conversation)
    done += length
    clock.advance(QUIET)
  }
  await mind.idle()
  return performance.now() - started
}

// ── Measures ────────────────────────────────────────────────────────────────────────────────────
/** Memory files under every `archive/<reason>/` folder of the home (every tree: agent, users, shared), by reason and kind. */
function archiveFiles(): Record<string, number> {
  const byReason: Record<string, number> = {}
  // Archived memory files are `.md`; the logs beside them (versions.jsonl) are not counted.
  // Keyed `reason/kind` (`versions/knowledge`, `forgotten/procedure`): the folder under the reason's.
  const walk = (path: string, key: string, depth: number): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(path, entry.name), depth === 0 ? `${key}/${entry.name}` : key, depth + 1)
      else if (entry.name.endsWith('.md')) byReason[key] = (byReason[key] ?? 0) + 1
    }
  }
  // The reason is the folder right under an `archive` folder.
  const walkTree = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const child = join(path, entry.name)
      if (entry.name === 'archive') {
        for (const reason of readdirSync(child, { withFileTypes: true })) if (reason.isDirectory()) walk(join(child, reason.name), reason.name, 0)
      } else walkTree(child)
    }
  }
  walkTree(home)
  return byReason
}

/** Knowledge and procedure files live in every tree (outside the archives). */
function liveDocuments(): { knowledge: number; procedure: number } {
  const live = { knowledge: 0, procedure: 0 }
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === 'archive') continue
      const child = join(path, entry.name)
      if (entry.name === 'knowledge' || entry.name === 'procedures') {
        const files = readdirSync(child, { withFileTypes: true }).filter((file) => file.isFile() && file.name.endsWith('.md')).length
        live[entry.name === 'knowledge' ? 'knowledge' : 'procedure'] += files
      } else walk(child)
    }
  }
  walk(home)
  return live
}

const pct = (samples: readonly number[], p: number): number => {
  if (samples.length === 0) return Number.NaN
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number
}
const ms = (value: number): string => (Number.isNaN(value) ? '—' : value < 10 ? value.toFixed(1) : Math.round(value).toLocaleString('en'))
const ran = (report: MaintenanceReport, kind: string) => report.jobs.find((job) => job.kind === kind)

interface Timed {
  report: MaintenanceReport
  ms: number
}
async function timedMaintain(mind: Mind): Promise<Timed> {
  const started = performance.now()
  const report = await mind.maintain()
  return { report, ms: performance.now() - started }
}

// ── The year ────────────────────────────────────────────────────────────────────────────────────
const benchStarted = performance.now()
const mind = await createMind({ home, env, ignoreConfigFile: true, clock, logger })

interface Month {
  month: string
  days: number
  /** The morning maintain() that ran the daily consolidation, and the reindex it ended with. */
  daily: number[]
  /** Mornings whose maintain() also ran the weekly integration (Mondays) or the monthly forgetting (the 1st). */
  weekly: number[]
  monthly: number[]
  dailyReindex: number[]
  /** That call again at once, nothing due (sampled weekly). */
  baseline: number[]
  /** The evening maintain() that closed the day's sessions. */
  evening: number[]
  /** Mean wall time of a turn on the agent path and on the cheap one. */
  fullTurn: number
  lightTurn: number
  fullTurns: number
  lightTurns: number
  lowActivity: number
  forgotten: number
  /** Jobs the daily runs ran besides the daily consolidation (work left over, the monthly run), by kind. */
  otherJobs: Map<string, number>
  /** Files the last reindex looked at (`mind.lastReindex.sources`). */
  files: number
  index: Record<string, number>
  archive: Record<string, number>
  live: { knowledge: number; procedure: number }
}
const months: Month[] = []
let month: Month | undefined
const dailyNotRun: string[] = []

interface Morning {
  daily: Timed
  reindexMs: number
  baseline?: Timed
}
/** 03:00: the first maintain() of the day (the daily consolidation is due), and, when asked, the same call again. */
async function morning(day: number, withBaseline: boolean): Promise<Morning> {
  moveClockTo(START + day * DAY + 3 * HOUR)
  const before = mind.lastReindex
  const daily = await timedMaintain(mind)
  const reindexMs = mind.lastReindex !== before ? (mind.lastReindex?.ms ?? Number.NaN) : Number.NaN
  const job = ran(daily.report, 'consolidation-daily')
  if (!job || (job.status !== 'done' && job.status !== 'skipped')) dailyNotRun.push(`${isoDay(clock.now())}: ${job?.status ?? 'not run'} ${job?.reason ?? ''}`)
  // The same call again, nothing due: what every maintain() costs (pruning, the reindex it ends with).
  return { daily, reindexMs, ...(withBaseline ? { baseline: await timedMaintain(mind) } : {}) }
}

for (let day = 0; day < days; day++) {
  const monthName = isoDay(new Date(START + day * DAY)).slice(0, 7)
  if (month?.month !== monthName) {
    month = { month: monthName, days: 0, daily: [], weekly: [], monthly: [], dailyReindex: [], baseline: [], evening: [], fullTurn: 0, lightTurn: 0, fullTurns: 0, lightTurns: 0, lowActivity: 0, forgotten: 0, otherJobs: new Map(), files: 0, index: {}, archive: {}, live: { knowledge: 0, procedure: 0 } }
    months.push(month)
  }
  const { daily, reindexMs, baseline } = await morning(day, day % 7 === 3)
  month.days++
  // Each morning counts once: with the monthly run, else with the weekly one, else as a daily run.
  const ranKinds = new Set(daily.report.jobs.map((job) => job.kind))
  if (ranKinds.has('consolidation-monthly')) month.monthly.push(daily.ms)
  else if (ranKinds.has('consolidation-weekly')) month.weekly.push(daily.ms)
  else month.daily.push(daily.ms)
  month.dailyReindex.push(reindexMs)
  if (baseline) month.baseline.push(baseline.ms)
  const dailyJob = ran(daily.report, 'consolidation-daily')
  if (typeof dailyJob?.result?.lowActivity === 'number') month.lowActivity = dailyJob.result.lowActivity
  const monthly = ran(daily.report, 'consolidation-monthly')
  if (typeof monthly?.result?.forgotten === 'number') month.forgotten += monthly.result.forgotten
  for (const job of daily.report.jobs) if (!job.kind.startsWith('consolidation-')) month.otherJobs.set(job.kind, (month.otherJobs.get(job.kind) ?? 0) + 1)

  await liveDay(mind, day, turnsPerDay)
  moveClockTo(START + day * DAY + 23 * HOUR)
  month.evening.push((await timedMaintain(mind)).ms)

  const lastOfMonth = day === days - 1 || isoDay(new Date(START + (day + 1) * DAY)).slice(0, 7) !== monthName
  if (lastOfMonth) {
    Object.assign(month, { fullTurn: turnTime.full / turnTime.fullTurns, lightTurn: turnTime.light / turnTime.lightTurns, fullTurns: turnTime.fullTurns, lightTurns: turnTime.lightTurns })
    Object.assign(turnTime, { full: 0, fullTurns: 0, light: 0, lightTurns: 0 })
    month.files = mind.lastReindex?.sources ?? 0
    month.index = await mind.backend.index.count()
    month.archive = archiveFiles()
    month.live = liveDocuments()
    const seconds = ((performance.now() - benchStarted) / 1000).toFixed(0)
    process.stderr.write(
      `[bench] ${monthName}: ${Object.values(month.index).reduce((a, b) => a + b, 0)} units, ${month.files} files; daily run p50 ${ms(pct(month.daily, 0.5))} ms, evening ${ms(pct(month.evening, 0.5))} ms; turns ${ms(month.fullTurn)} / ${ms(month.lightTurn)} ms (${seconds} s so far)\n`,
    )
  }
}
const yearSeconds = (performance.now() - benchStarted) / 1000

// ── One 1,000-turn day on the year-old home ─────────────────────────────────────────────────────
interface BigDay {
  turnMs: number
  fullTurn: number
  lightTurn: number
  fullTurns: number
  evening: number
  next: Morning
  before: Morning
}
let big: BigDay | undefined
if (bigDay > 0) {
  const day = days
  const before = await morning(day, true) // this day's own consolidation, before its turns
  const turnMs = await liveDay(mind, day, bigDay)
  moveClockTo(START + day * DAY + 23 * HOUR)
  const evening = (await timedMaintain(mind)).ms
  const next = await morning(day + 1, true) // the consolidation after the big day
  big = { turnMs, fullTurn: turnTime.full / turnTime.fullTurns, lightTurn: turnTime.light / turnTime.lightTurns, fullTurns: turnTime.fullTurns, evening, next, before }
}
await mind.close()
const totalSeconds = (performance.now() - benchStarted) / 1000

// ── Report ──────────────────────────────────────────────────────────────────────────────────────
const KINDS = ['message', 'summary', 'episode', 'activity', 'knowledge', 'procedure', 'lesson', 'rule', 'profile', 'topic', 'skill', 'user']
const seenKinds = new Set(months.flatMap((m) => Object.keys(m.index).filter((kind) => (m.index[kind] ?? 0) > 0)))
const kinds = [...KINDS.filter((kind) => seenKinds.has(kind)), ...[...seenKinds].filter((kind) => !KINDS.includes(kind))]
const reasons = [...new Set(['forgotten/knowledge', 'forgotten/procedure', 'merged/knowledge', ...months.flatMap((m) => Object.keys(m.archive))])].sort()
const jobsOf = (report: MaintenanceReport): string => {
  const byKind = new Map<string, number>()
  for (const job of report.jobs) byKind.set(job.kind, (byKind.get(job.kind) ?? 0) + 1)
  return [...byKind].map(([kind, n]) => `${kind} ×${n}`).join(', ') || 'none'
}

console.log(`## Growth over a simulated year: ${days} days × ${turnsPerDay} turns, ${USERS.length} users`)
console.log('')
console.log(
  `Node ${process.version}, ${process.platform}/${process.arch}, offline (no LLM, default offline embedder), seed ${seed}. The year took ${Math.round(yearSeconds)} s, the whole bench ${Math.round(totalSeconds)} s. Of ${counts.turns.toLocaleString('en')} turns, ${counts.agentPath.toLocaleString('en')} took the agent path (begin → tool → end): every fact stated and ${Math.round(fullShare * 100)}% of the others. The rest took the cheaper path: the same message, reply, activity events and tool call (memorize, search_memory, write_memory_file, report_procedure_outcome, the host's run_task) through the public API, without priming or assembly.`,
)
console.log('')
console.log(`| month | index units | ${kinds.join(' | ')} | live knowledge | live procedures | ${reasons.map((reason) => `archive/${reason}`).join(' | ')} | files reindexed | low-activity (last daily run) | forgotten (monthly run) |`)
console.log(`|---|---|${kinds.map(() => '---').join('|')}|---|---|${reasons.map(() => '---').join('|')}|---|---|---|`)
for (const m of months) {
  const total = Object.values(m.index).reduce((a, b) => a + b, 0)
  console.log(
    `| ${m.month} | ${total.toLocaleString('en')} | ${kinds.map((kind) => (m.index[kind] ?? 0).toLocaleString('en')).join(' | ')} | ${m.live.knowledge} | ${m.live.procedure} | ${reasons.map((reason) => (m.archive[reason] ?? 0).toLocaleString('en')).join(' | ')} | ${m.files.toLocaleString('en')} | ${m.lowActivity} | ${m.forgotten} |`,
  )
}
console.log('')
console.log(
  "Wall time, ms. Daily run: the first maintain() of the day (03:00), which ran the daily consolidation; on Mondays it also ran the weekly integration, on the 1st the monthly forgetting (those mornings are listed apart), each ending with a reindex. Other jobs: work left for these calls (none when the evening call finished it). Baseline: that call again at once, nothing due (one day a week). Evening: the maintain() that closed the day's sessions (their episodes). Turns: mean of each path, with their count.",
)
console.log('')
console.log('| month | daily run p50 | p95 | max | with the weekly run | with the monthly run | reindex p50 | other jobs in these runs | baseline p50 | evening p50 | turn, agent path | turn, cheap path |')
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
for (const m of months) {
  console.log(
    `| ${m.month} | ${ms(pct(m.daily, 0.5))} | ${ms(pct(m.daily, 0.95))} | ${ms(Math.max(...m.daily))} | ${m.weekly.map(ms).join(', ') || '—'} | ${m.monthly.map(ms).join(', ') || '—'} | ${ms(pct(m.dailyReindex.filter((x) => !Number.isNaN(x)), 0.5))} | ${[...m.otherJobs].map(([kind, n]) => `${kind} ×${n}`).join(', ') || 'none'} | ${ms(pct(m.baseline, 0.5))} | ${ms(pct(m.evening, 0.5))} | ${ms(m.fullTurn)} (${m.fullTurns}) | ${ms(m.lightTurn)} (${m.lightTurns}) |`,
  )
}
if (big) {
  console.log('')
  console.log(`One day of ${bigDay.toLocaleString('en')} turns on the home after the year (${isoDay(new Date(START + days * DAY))}):`)
  console.log('')
  console.log('| measure | ms |')
  console.log('|---|---|')
  console.log(`| the day's ${bigDay.toLocaleString('en')} turns, their background work included (${big.fullTurns} on the agent path, mean ${ms(big.fullTurn)}; the others mean ${ms(big.lightTurn)}) | ${ms(big.turnMs)} |`)
  console.log(`| evening maintain(): the day's sessions closed (episodes), no consolidation due | ${ms(big.evening)} |`)
  console.log(`| next morning maintain(): the daily consolidation after the big day (jobs: ${jobsOf(big.next.daily.report)}), its reindex ${ms(big.next.reindexMs)} | ${ms(big.next.daily.ms)} |`)
  console.log(`| baseline: that maintain() again at once, nothing due | ${ms(big.next.baseline?.ms ?? Number.NaN)} |`)
  console.log(`| the big day's own morning maintain(), before its turns (jobs: ${jobsOf(big.before.daily.report)}) | ${ms(big.before.daily.ms)} |`)
}
console.log('')
console.log(
  `Turns: ${counts.turns.toLocaleString('en')} — facts stated ${counts.facts} (${counts.factRepeats} of them said before, word for word), preferences memorized ${counts.memorized}, questions ${counts.questions} (with search_memory ${counts.searches}), tool tasks ${counts.taskCalls}, notes written ${counts.notesWritten}, rewritten ${counts.notesRewritten} and written again under another name ${counts.notesDuplicated}, procedure outcomes ${counts.outcomes}.`,
)
const errors = [...toolErrors].map(([what, n]) => `${what} ×${n}`)
console.log(`engram tool calls that returned an error: ${errors.length === 0 ? 'none' : errors.slice(0, 5).join('; ')}.`)
if (dailyNotRun.length > 0) console.log(`Days whose morning maintain() did not run the daily consolidation: ${dailyNotRun.length} (${dailyNotRun.slice(0, 3).join('; ')}).`)
console.log(`engram warnings logged: ${warnings.length}${warnings.length > 0 ? ` (first: ${[...new Set(warnings)].slice(0, 3).join(' | ')})` : ''}.`)
if (values.keep) console.log(`Home kept at ${home}.`)
else rmSync(dir, { recursive: true, force: true })
