/**
 * Weekly integration (../shared/seeds/003 "Weekly Integration Pipeline"; DESIGN §5) as queued
 * work keyed by the ISO week, so it runs once a week whichever process's `maintain()` looks
 * first. Per owner (what one user said is merged, compared and distilled only with that user's):
 *
 * - **Duplicate merge**: live knowledge documents at least 0.8 similar that state the same numbers
 *   and names ("budget 40k" never merges with "budget 30k") become one. The survivor is the most
 *   recently written; the others go to `archive/merged/` with `merged_into`, and `engram restore`
 *   brings any back. With a model the survivor is reworded to hold both (and checked: the merged
 *   text may state no number or name the originals did not); without one it keeps its own words —
 *   the pair said the same things, and the other's words stay in the archive — marked
 *   `merge_method: similarity`.
 * - **Low-activity merge** (the seed's weekly "neurogenesis reorganization", with a model): live
 *   knowledge the daily run marked low-activity (`activity_level: low`) is paired with the most
 *   similar other low-activity document of the same owner (at least 0.5 alike: about one subject,
 *   not necessarily saying the same) and the model writes one text holding both. The merge is
 *   kept only when that text states no number or name the two did not and drops none they did;
 *   the newer document survives with the text (a fresh memory, its mark taken off), the other goes
 *   to `archive/merged/` with `merged_into`, restorable. Offline this is pending: only duplicates
 *   merge.
 * - **Episode compression** (episode-compression.ts): day files older than 30 days keep each
 *   section's lead, its lists and its marker; the full text stays in `archive/versions/`.
 * - **Weekly pattern distillation**: tool sequences repeated in three or more sessions of the week
 *   (the activity log) are distilled into procedures by the model (skipped when one at least 0.85
 *   similar exists). Offline the patterns found are reported pending.
 * - **Full contradiction scan**: pairs of live facts alike enough to be about one thing, not yet
 *   resolved, are judged by the model: supersede, merge or coexist, as the daily run does. Offline
 *   pending.
 *
 * As in the daily run, each owner's model work is planned in full before anything is written: a
 * failing model leaves the files as they were and the job is retried with the step and the reason.
 * The plan is stored before its first write and applied idempotently (unit-plan.ts, decision
 * 0053), and a run records each owner it integrated: a killed run is finished by the next one,
 * which goes on with the owners it had not reached instead of integrating the others twice.
 */
import { randomUUID } from 'node:crypto'
import { isoDay } from '../../core/clock.ts'
import type { Clock } from '../../core/clock.ts'
import { describeError } from '../../core/errors.ts'
import { yieldToEventLoop } from '../../core/yield.ts'
import type { Frontmatter } from '../../core/memory-doc.ts'
import type { Owner } from '../../core/owner.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { Backend, DocumentStore } from '../../storage/contracts.ts'
import { type HomeLayout, ownerNamespace } from '../../storage/home-layout.ts'
import type { JobHandler } from '../lifecycle/job-runner.ts'
import { DOC_FOLDERS } from '../forgetting/forget-memory.ts'
import { compressEpisodes, type EpisodeCompressionRun } from './episode-compression.ts'
import { episodeOwners } from './episode-sources.ts'
import { LOW_ACTIVITY_FIELDS } from './forgetting-policy.ts'
import { oneConsolidationAtATime } from './one-at-a-time.ts'
import { contradictionSchema, type ConsolidationSettings, distilledProcedure, type PendingStep, PROCEDURE_DUPLICATE_SIMILARITY, proceduresSchema, step } from './knowledge-consolidation.ts'
import { BudgetExhausted, type BudgetedLlm, budgetedLlm } from './llm-budget.ts'
import { commitUnit, finishUnfinishedUnits, ownerDigest, type PlannedChange, stuckStep, type UnitPlan } from './unit-plan.ts'
import { isoWeek } from './schedule.ts'
import { countsSimilarity, factsAgree, readFacts, sanitizeFences, slugFor, termCounts, type TextFacts, textSimilarity, unsupportedFacts } from './text-facts.ts'
import { z } from 'zod'

export { WEEKLY_INTEGRATION_JOB, weeklyIntegrationJob } from './schedule.ts'

/** Two live facts at least this similar, with the same numbers and names, are duplicates. */
export const DUPLICATE_SIMILARITY = 0.8
/**
 * Two low-activity documents at least this similar are merged by the model (lexical cosine over
 * ranking terms; the seed's reorganization merges "similar" low-activity chunks). Above the
 * contradiction scan's "about one thing" (0.3), well below duplicates (0.8).
 */
const LOW_ACTIVITY_MERGE_SIMILARITY = 0.5
/** Two live facts at least this similar (and below the duplicate bar) are checked for a contradiction. */
const SCAN_SIMILARITY = 0.3
/** A tool sequence seen in this many sessions of the week is a pattern. */
const PATTERN_SESSIONS = 3
/** The documents of one owner compared pairwise (the newest); a bound on the week's work. */
const MAX_COMPARED = 2000


export interface WeeklyIntegrationDeps {
  backend: Backend
  layout: HomeLayout
  clock: Clock
  llm: Llm
  agent: string
  settings: ConsolidationSettings
  indexed(): Promise<void>
}

export interface WeeklyIntegrationRun {
  model: string | undefined
  merged: Array<{ survivor: string; merged: string[]; method: 'llm' | 'similarity'; why: string }>
  compressed: EpisodeCompressionRun['compressed']
  distilled: Array<{ path: string; description: string; sessions: number }>
  contradictions: Array<{ strategy: 'supersede' | 'merge' | 'coexist'; old: string; new: string; why: string }>
  pending: PendingStep[]
  calls: number
  tokens: number
}

interface Doc {
  slug: string
  frontmatter: Frontmatter
  body: string
  terms: Map<string, number>
  /** Its facts, read at the first comparison that needs them (`sameFacts`), then reused. */
  facts?: TextFacts
}

/**
 * Whether two documents state the same facts. Each document's facts are read once, not once per
 * pair: on a home of large notes alike in their words, reading them per pair cost minutes.
 */
function sameFacts(a: Doc, b: Doc): boolean {
  a.facts ??= readFacts(a.body)
  b.facts ??= readFacts(b.body)
  return factsAgree(a.facts, b.facts)
}

/**
 * Pairwise comparison is up to MAX_COMPARED² pairs: it lets the event loop run at least this often
 * (milliseconds of work), so a server running maintenance keeps answering.
 */
const SLICE_MS = 20

/** A loop's pause point: lets the event loop run once SLICE_MS of work have passed since the last. */
function slicer(): () => Promise<void> {
  let start = performance.now()
  return async () => {
    if (performance.now() - start < SLICE_MS) return
    await yieldToEventLoop()
    start = performance.now()
  }
}

const isLive = (fm: Frontmatter): boolean => !(typeof fm.superseded_by === 'string' && fm.superseded_by !== '') && !(typeof fm.merged_into === 'string' && fm.merged_into !== '')
const isGuarded = (doc: Doc): boolean => doc.frontmatter.protected === true || /\[IMPORTANT\]/i.test(doc.body)
const writtenAt = (fm: Frontmatter): string => String(fm.valid_from ?? fm.updated_at ?? fm.created_at ?? '')

async function liveKnowledge(documents: DocumentStore): Promise<Doc[]> {
  const docs: Doc[] = []
  for (const ref of await documents.list('knowledge')) {
    const doc = await documents.read('knowledge', ref.slug)
    if (doc && isLive(doc.frontmatter)) docs.push({ slug: ref.slug, frontmatter: doc.frontmatter, body: doc.body, terms: termCounts(doc.body) })
  }
  docs.sort((a, b) => writtenAt(b.frontmatter).localeCompare(writtenAt(a.frontmatter)))
  return docs.slice(0, MAX_COMPARED)
}

/** Groups of duplicates: connected pairs ≥ DUPLICATE_SIMILARITY whose facts agree. */
async function duplicateGroups(docs: readonly Doc[]): Promise<Doc[][]> {
  const parent = docs.map((_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i] as number] as number
    return i
  }
  const pause = slicer()
  for (let i = 0; i < docs.length; i++) {
    for (let j = i + 1; j < docs.length; j++) {
      const a = docs[i] as Doc
      const b = docs[j] as Doc
      if (countsSimilarity(a.terms, b.terms) >= DUPLICATE_SIMILARITY && sameFacts(a, b)) parent[find(j)] = find(i)
      await pause()
    }
  }
  const groups = new Map<number, Doc[]>()
  docs.forEach((doc, i) => {
    const root = find(i)
    groups.set(root, [...(groups.get(root) ?? []), doc])
  })
  return [...groups.values()].filter((group) => group.length > 1)
}

const mergeSchema = z.object({
  content: z.string().min(8).max(4000).describe('One fact in markdown holding everything the texts state, nothing more.'),
})

interface Write {
  slug: string
  frontmatter: Frontmatter
  body: string
  reason: string
}

interface OwnerPlan {
  writes: Map<string, Write>
  merged: string[]
}

function put(plan: OwnerPlan, write: Write): void {
  const earlier = plan.writes.get(write.slug)
  plan.writes.set(write.slug, earlier ? { ...write, reason: `${earlier.reason}; ${write.reason}` } : write)
}

/**
 * The low-activity merge (see the module comment): pairs of marked documents, most alike first,
 * each document in one pair at most; planned into `plan`, or reported pending without a model.
 */
async function mergeLowActivity(llm: BudgetedLlm | undefined, docs: readonly Doc[], gone: Set<string>, plan: OwnerPlan, run: WeeklyIntegrationRun, at: { now: string; path: (slug: string) => string }): Promise<void> {
  // Not one a duplicate merge of this week already rewrote (its survivor): one rewrite per document a week.
  const low = docs.filter((doc) => !gone.has(doc.slug) && !plan.writes.has(doc.slug) && !isGuarded(doc) && doc.frontmatter[LOW_ACTIVITY_FIELDS.level] === 'low')
  const pairs: Array<{ newer: Doc; older: Doc; similarity: number }> = []
  for (let i = 0; i < low.length; i++) {
    for (let j = i + 1; j < low.length; j++) {
      const similarity = countsSimilarity((low[i] as Doc).terms, (low[j] as Doc).terms)
      // docs are newest first, so low[i] is the newer of the two.
      if (similarity >= LOW_ACTIVITY_MERGE_SIMILARITY) pairs.push({ newer: low[i] as Doc, older: low[j] as Doc, similarity })
    }
  }
  if (pairs.length === 0) return
  if (!llm) {
    run.pending.push({ step: 'low-activity merge', reason: 'no model configured (llm.provider none): offline only duplicates merge', waiting: pairs.length })
    return
  }
  pairs.sort((a, b) => b.similarity - a.similarity)
  for (const { newer, older, similarity } of pairs) {
    if (gone.has(newer.slug) || gone.has(older.slug)) continue
    const answer = await step('low-activity merge', () =>
      // The duplicate merge's schema and layout: one text from several, checked the same way.
      llm.generateObject({
        schema: mergeSchema,
        name: 'merge',
        system: 'You merge two rarely used memories about one subject into one memory. Keep every fact of both, add nothing, say each once.',
        messages: [{ role: 'user', content: `### Text 1\n${newer.body}\n\n### Text 2\n${older.body}` }],
      }),
    )
    const merged = sanitizeFences(answer.content)
    const both = `${newer.body}\n${older.body}`
    // Kept only when nothing was invented and nothing dropped: both texts' numbers and names are in it.
    if (unsupportedFacts(merged, both).length > 0 || unsupportedFacts(both, merged).length > 0) continue
    const { [LOW_ACTIVITY_FIELDS.level]: _level, [LOW_ACTIVITY_FIELDS.since]: _since, ...fresh } = newer.frontmatter
    const earlier = Array.isArray(newer.frontmatter.merged_from) ? newer.frontmatter.merged_from.map(String) : []
    put(plan, {
      slug: newer.slug,
      body: `${merged}\n`,
      frontmatter: { ...fresh, merged_from: [...earlier, older.slug], merge_method: 'llm', updated_at: at.now, ...(llm.model ? { model: llm.model } : {}) },
      reason: `weekly integration: low-activity merge with ${older.slug} (${similarity.toFixed(2)} similar)`,
    })
    put(plan, { slug: older.slug, body: older.body, frontmatter: { ...older.frontmatter, merged_into: newer.slug, updated_at: at.now }, reason: `weekly integration: low-activity merge into ${newer.slug}` })
    plan.merged.push(older.slug)
    gone.add(older.slug)
    gone.add(newer.slug)
    run.merged.push({ survivor: at.path(newer.slug), merged: [at.path(older.slug)], method: 'llm', why: `both low-activity, ${similarity.toFixed(2)} similar` })
  }
}

/** Tool sequences of the week's sessions seen in PATTERN_SESSIONS or more, with examples. */
async function weekPatterns(backend: Backend, owner: Owner, since: string, until: string): Promise<Array<{ tools: string[]; sessions: string[]; examples: string[] }>> {
  const events = await backend.owned(owner).activity.read({ since, until, types: ['tool_use'] })
  const bySession = new Map<string, Array<{ tool: string; input: string }>>()
  for (const event of events) {
    if (!event.session || !event.tool) continue
    const steps = bySession.get(event.session) ?? []
    if (steps.at(-1)?.tool !== event.tool) steps.push({ tool: event.tool, input: typeof event.meta?.input === 'string' ? event.meta.input.slice(0, 200) : '' })
    bySession.set(event.session, steps)
  }
  const patterns = new Map<string, { tools: string[]; sessions: string[]; examples: string[] }>()
  for (const [session, steps] of bySession) {
    if (steps.length < 2) continue
    const tools = steps.map((s) => s.tool)
    const key = tools.join(' → ')
    const pattern = patterns.get(key) ?? { tools, sessions: [], examples: [] }
    pattern.sessions.push(session)
    if (pattern.examples.length < 3) pattern.examples.push(steps.map((s) => `${s.tool} ${s.input}`.trim()).join('\n'))
    patterns.set(key, pattern)
  }
  return [...patterns.values()].filter((pattern) => pattern.sessions.length >= PATTERN_SESSIONS)
}

async function planOwner(deps: WeeklyIntegrationDeps, llm: BudgetedLlm | undefined, owner: Owner, run: WeeklyIntegrationRun, now: string): Promise<OwnerPlan> {
  const plan: OwnerPlan = { writes: new Map(), merged: [] }
  const documents = deps.backend.owned(owner).documents
  const namespace = ownerNamespace(owner)
  const knowledgePath = (slug: string): string => `${namespace}knowledge/${slug}.md`
  const docs = await liveKnowledge(documents)

  // Duplicate merge.
  const gone = new Set<string>()
  for (const group of await duplicateGroups(docs)) {
    const survivor = group[0] as Doc
    const others = group.slice(1).filter((doc) => !isGuarded(doc))
    if (others.length === 0) continue
    let body = survivor.body
    let method: 'llm' | 'similarity' = 'similarity'
    if (llm) {
      const answer = await step('duplicate merge', () =>
        llm.generateObject({
          schema: mergeSchema,
          name: 'merge',
          system: 'You merge texts of one memory that say the same thing into one text. Keep every fact; add nothing.',
          messages: [{ role: 'user', content: [survivor, ...others].map((doc, i) => `### Text ${i + 1}\n${doc.body}`).join('\n\n') }],
        }),
      )
      const merged = sanitizeFences(answer.content)
      if (unsupportedFacts(merged, [survivor, ...others].map((doc) => doc.body).join('\n')).length === 0) {
        body = `${merged}\n`
        method = 'llm'
      }
    }
    const earlier = Array.isArray(survivor.frontmatter.merged_from) ? survivor.frontmatter.merged_from.map(String) : []
    put(plan, {
      slug: survivor.slug,
      body,
      frontmatter: { ...survivor.frontmatter, merged_from: [...earlier, ...others.map((doc) => doc.slug)], merge_method: method, updated_at: now, ...(method === 'llm' && llm?.model ? { model: llm.model } : {}) },
      reason: `weekly integration: merged ${others.map((doc) => doc.slug).join(', ')} (${method})`,
    })
    for (const other of others) {
      put(plan, { slug: other.slug, body: other.body, frontmatter: { ...other.frontmatter, merged_into: survivor.slug, updated_at: now }, reason: `weekly integration: merged into ${survivor.slug}` })
      plan.merged.push(other.slug)
      gone.add(other.slug)
    }
    run.merged.push({ survivor: knowledgePath(survivor.slug), merged: others.map((doc) => knowledgePath(doc.slug)), method, why: `${others.length + 1} texts at least ${DUPLICATE_SIMILARITY} similar stating the same numbers and names` })
  }

  await mergeLowActivity(llm, docs, gone, plan, run, { now, path: knowledgePath })

  // Weekly pattern distillation.
  const weekAgo = new Date(new Date(now).getTime() - 7 * 86_400_000).toISOString()
  const patterns = await weekPatterns(deps.backend, owner, weekAgo, now)
  if (patterns.length > 0 && !llm) run.pending.push({ step: 'pattern distillation', reason: 'no model configured (llm.provider none): tool sequences repeated this week wait for one', waiting: patterns.length })
  if (patterns.length > 0 && llm) {
    const procedures: Array<{ slug: string; text: string }> = []
    for (const ref of await documents.list('procedure')) {
      const doc = await documents.read('procedure', ref.slug)
      if (doc) procedures.push({ slug: ref.slug, text: `${String(doc.frontmatter.description ?? '')}\n${doc.body}` })
    }
    for (const pattern of patterns) {
      const answer = await step('pattern distillation', () =>
        llm.generateObject({
          schema: proceduresSchema,
          name: 'procedures',
          system: 'You distil a reusable procedure from a sequence of tool calls an AI agent repeated in several sessions this week. Only what the calls show.',
          messages: [{ role: 'user', content: `Tools, in order: ${pattern.tools.join(' → ')} (in ${pattern.sessions.length} sessions)\n\nExamples:\n${pattern.examples.map((example, i) => `### Session ${i + 1}\n${example}`).join('\n\n')}` }],
        }),
      )
      for (const draft of answer.procedures.slice(0, 1)) {
        const text = `${draft.description}\n${draft.steps.join('\n')}`
        if (procedures.some((existing) => textSimilarity(text, existing.text) >= PROCEDURE_DUPLICATE_SIMILARITY)) continue
        const slug = slugFor(draft.title, new Set(procedures.map((existing) => existing.slug)))
        procedures.push({ slug, text })
        plan.writes.set(`procedure:${slug}`, {
          slug,
          ...distilledProcedure(draft, now, llm.model, { pattern: pattern.tools.join(' → ') }),
          reason: `weekly pattern distillation: ${pattern.tools.join(' → ')} in ${pattern.sessions.length} sessions`,
        })
        run.distilled.push({ path: `${namespace}procedures/${slug}.md`, description: draft.description, sessions: pattern.sessions.length })
      }
    }
  }

  // Full contradiction scan.
  const live = docs.filter((doc) => !gone.has(doc.slug))
  const pairs: Array<[Doc, Doc]> = []
  const pause = slicer()
  for (let i = 0; i < live.length; i++) {
    for (let j = i + 1; j < live.length; j++) {
      const a = live[i] as Doc
      const b = live[j] as Doc
      const linked = [a.frontmatter.coexists_with, b.frontmatter.coexists_with].some((list) => Array.isArray(list) && (list.includes(a.slug) || list.includes(b.slug)))
      if (linked) continue
      const similarity = countsSimilarity(a.terms, b.terms)
      if (similarity >= SCAN_SIMILARITY && !(similarity >= DUPLICATE_SIMILARITY && sameFacts(a, b))) pairs.push([a, b])
      await pause()
    }
  }
  if (pairs.length > 0 && !llm) run.pending.push({ step: 'contradiction scan', reason: 'no model configured (llm.provider none)', waiting: pairs.length })
  if (pairs.length > 0 && llm) {
    const settled = new Set<string>()
    for (const [newer, older] of pairs) {
      if (settled.has(newer.slug) || settled.has(older.slug)) continue
      const answer = await step('contradiction scan', () =>
        llm.generateObject({
          schema: contradictionSchema,
          name: 'contradiction',
          system: 'You compare a new fact with an existing one from the same memory and say whether they contradict, and how to resolve it.',
          messages: [{ role: 'user', content: `Existing (${older.slug}, recorded ${writtenAt(older.frontmatter) || 'earlier'}):\n${older.body}\n\nNew (${newer.slug}, recorded ${writtenAt(newer.frontmatter) || 'later'}):\n${newer.body}` }],
        }),
      )
      if (answer.relation !== 'contradiction') continue
      settled.add(newer.slug)
      settled.add(older.slug)
      const strategy = answer.strategy ?? 'supersede'
      const until = writtenAt(newer.frontmatter) || now
      let applied: 'supersede' | 'merge' | 'coexist' = 'supersede'
      if (strategy === 'merge' && answer.merged?.trim() && unsupportedFacts(answer.merged, `${older.body}\n${newer.body}`).length === 0 && !isGuarded(older)) {
        put(plan, { slug: newer.slug, body: `${sanitizeFences(answer.merged)}\n`, frontmatter: { ...newer.frontmatter, merged_from: [older.slug], updated_at: now, merge_method: 'llm' }, reason: `contradiction scan: merged with ${older.slug}: ${answer.reason}` })
        put(plan, { slug: older.slug, body: older.body, frontmatter: { ...older.frontmatter, merged_into: newer.slug, updated_at: now }, reason: `contradiction scan: merged into ${newer.slug}` })
        plan.merged.push(older.slug)
        applied = 'merge'
      } else if (strategy === 'coexist') {
        applied = 'coexist'
        const condition = answer.condition ?? answer.reason
        put(plan, { slug: newer.slug, body: newer.body, frontmatter: { ...newer.frontmatter, coexists_with: [older.slug], coexistence: condition, updated_at: now }, reason: `contradiction scan: coexists with ${older.slug}` })
        put(plan, { slug: older.slug, body: older.body, frontmatter: { ...older.frontmatter, coexists_with: [newer.slug], coexistence: condition, updated_at: now }, reason: `contradiction scan: coexists with ${newer.slug}` })
      } else {
        put(plan, { slug: newer.slug, body: newer.body, frontmatter: { ...newer.frontmatter, supersedes: older.slug, valid_from: until, updated_at: now }, reason: `contradiction scan: supersedes ${older.slug}` })
        put(plan, { slug: older.slug, body: older.body, frontmatter: { ...older.frontmatter, superseded_by: newer.slug, valid_until: until, updated_at: now }, reason: `contradiction scan: superseded by ${newer.slug}: ${answer.reason}` })
      }
      run.contradictions.push({ strategy: applied, old: knowledgePath(older.slug), new: knowledgePath(newer.slug), why: answer.reason })
    }
  }
  return plan
}

/** The jobs-run name under which each owner's integration by a weekly run is recorded. */
export const WEEK_INTEGRATED = 'consolidation-weekly-owner'

/**
 * The owner's plan as it is committed (unit-plan.ts): each document's new text with the record of
 * the change in the owner's own activity log, the merged documents, and the record that the
 * owner's week is integrated.
 */
function unitPlanOf(plan: OwnerPlan, unit: { week: string; run: string; owner: Owner; agent: string; at: string; model: string | undefined }): UnitPlan {
  const name = `weekly ${unit.week}`
  const namespace = ownerNamespace(unit.owner)
  const changes: PlannedChange[] = [...plan.writes].map(([key, write]) => {
    const kind = key.startsWith('procedure:') ? 'procedure' : 'knowledge'
    const reason = write.reason.slice(0, 500)
    const path = `${namespace}${DOC_FOLDERS[kind]}/${write.slug}.md`
    return {
      kind,
      slug: write.slug,
      frontmatter: write.frontmatter,
      body: write.body,
      reason,
      activity: { ts: unit.at, type: 'memory_write', content: path, summary: `${reason} — ${path}`, meta: { action: 'consolidate', period: 'weekly', path, reason, unit: name, ...(unit.model ? { model: unit.model } : {}) } },
    }
  })
  return {
    unit: name,
    at: unit.at,
    changes,
    merged: plan.merged.map((slug) => ({ kind: 'knowledge', slug })),
    completion: { job: WEEK_INTEGRATED, agent: unit.agent, startedAt: unit.at, finishedAt: unit.at, status: 'ok', details: { unit: name, owner: ownerDigest(unit.owner), week: unit.week, run: unit.run } },
  }
}

/** The jobs-run name under which each weekly run's start and end are recorded. */
const WEEKLY_RUN = 'consolidation-weekly-run'

/**
 * The run to do now: the one a killed process left unfinished (started, never ended), with the
 * owners it had integrated, so that it goes on with the next owner; else a new one.
 */
async function resumableRun(backend: Backend, agent: string, at: string): Promise<{ id: string; done: Set<string>; since?: string }> {
  const [last] = await backend.jobs.runs({ job: WEEKLY_RUN, agent, limit: 1 })
  if (last && last.details.state === 'started' && typeof last.details.run === 'string') {
    const id = last.details.run
    const owners = await backend.jobs.runs({ job: WEEK_INTEGRATED, agent, limit: 1000 })
    return { id, since: last.startedAt, done: new Set(owners.filter((run) => run.details.run === id && typeof run.details.owner === 'string').map((run) => run.details.owner as string)) }
  }
  const id = randomUUID()
  await backend.jobs.record({ job: WEEKLY_RUN, agent, startedAt: at, finishedAt: at, status: 'ok', details: { run: id, state: 'started' } })
  return { id, done: new Set() }
}

/** One week's integration (see the module comment). */
export async function runWeeklyIntegration(deps: WeeklyIntegrationDeps, options: { dryRun?: boolean } = {}): Promise<WeeklyIntegrationRun> {
  return oneConsolidationAtATime(deps.backend, deps.agent, () => weeklyRun(deps, options))
}

async function weeklyRun(deps: WeeklyIntegrationDeps, options: { dryRun?: boolean }): Promise<WeeklyIntegrationRun> {
  await deps.indexed()
  const now = deps.clock.now().toISOString()
  const llm = deps.llm.available ? budgetedLlm(deps.llm, { calls: deps.settings.calls, tokens: deps.settings.tokens }) : undefined
  const run: WeeklyIntegrationRun = { model: llm?.model, merged: [], compressed: [], distilled: [], contradictions: [], pending: [], calls: 0, tokens: 0 }
  const week = isoWeek(deps.clock.now())
  // What a killed run left planned is finished first, and a killed run goes on with the owner
  // after the last one it integrated, instead of planning those owners again over what it wrote.
  const stuck = options.dryRun ? [] : (await finishUnfinishedUnits(deps.backend)).stuck
  run.pending.push(...stuck.map((unit) => stuckStep(unit)))
  const resumed = options.dryRun ? { id: '', done: new Set<string>() } : await resumableRun(deps.backend, deps.agent, now)
  try {
    for (const owner of await episodeOwners(deps.backend)) {
      if (resumed.done.has(ownerDigest(owner)) || stuck.some((unit) => unit.owner === owner)) continue
      const draft: WeeklyIntegrationRun = { ...run, merged: [], distilled: [], contradictions: [], pending: [] }
      const plan = await planOwner(deps, llm, owner, draft, now)
      if (!options.dryRun) await commitUnit(deps.backend, owner, unitPlanOf(plan, { week, run: resumed.id, owner, agent: deps.agent, at: now, model: llm?.model }))
      run.merged.push(...draft.merged)
      run.distilled.push(...draft.distilled)
      run.contradictions.push(...draft.contradictions)
      run.pending.push(...draft.pending)
    }
  } catch (error) {
    if (!(error instanceof BudgetExhausted)) throw error
    run.pending.push({ step: 'contradiction scan', reason: error.message, waiting: 0 })
  }
  run.compressed = (await compressEpisodes(deps, { ...options, ...(resumed.since !== undefined ? { resumedSince: resumed.since } : {}) })).compressed
  if (!options.dryRun) await deps.backend.jobs.record({ job: WEEKLY_RUN, agent: deps.agent, startedAt: now, finishedAt: deps.clock.now().toISOString(), status: 'ok', details: { run: resumed.id, state: 'ended' } })
  if (llm) Object.assign(run, { calls: llm.used().calls, tokens: llm.used().tokens })
  return run
}

export function weeklyIntegrationHandler(deps: WeeklyIntegrationDeps, onRun?: (run: WeeklyIntegrationRun) => void): JobHandler {
  return async () => {
    let run: WeeklyIntegrationRun
    try {
      run = await runWeeklyIntegration(deps)
    } catch (error) {
      return { status: 'retry', error: `weekly integration: ${describeError(error)}; nothing was written for the owner it failed on` }
    }
    onRun?.(run)
    const result = {
      merged: run.merged.length,
      compressed: run.compressed.length,
      distilled: run.distilled.length,
      contradictions: run.contradictions.length,
      ...(run.model ? { model: run.model } : {}),
      calls: run.calls,
      tokens: run.tokens,
      pending: run.pending.map((item) => `${item.step}: ${item.reason} (${item.waiting} waiting)`),
      day: isoDay(deps.clock.now()),
    }
    const changed = run.merged.length + run.compressed.length + run.distilled.length + run.contradictions.length
    if (changed === 0) return { status: 'skipped', reason: run.pending[0] ? `${run.pending[0].step} pending: ${run.pending[0].reason}` : 'nothing to integrate', result }
    return { status: 'done', result }
  }
}
