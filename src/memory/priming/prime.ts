/**
 * Priming — automatic recall before every turn (the seed's priming layer; the hippocampus
 * completing a pattern before anyone asks). Four channels run in parallel:
 *
 *   A  sender profile      exact lookup of shared/users/<user>.md
 *   B  recent activity     the activity log of the last hours, grouped, with pointers
 *   C  related memories    hybrid retrieval over knowledge, lessons, rules, topics, episodes,
 *                          messages, summaries and procedures
 *   D  skills/procedures   the 3-stage matcher ([keyword], lexical) over the skill and procedure
 *                          stores, then retrieval over skill/procedure units for what is left
 *
 * The budget depends on the message type (classifyMessage); its split is in settings.ts. The
 * result is the framed block and the list of what was injected, from where, and why.
 */
import type { Clock } from '../../core/clock.ts'
import { inListingOrder, memoryKinds } from '../../core/memory-kinds.ts'
import { describeError, EngramError, ErrorCode } from '../../core/errors.ts'
import { userKey, type Viewer } from '../../core/owner.ts'
import { countTokensByLine } from '../../core/tokens.ts'
import type { ActivityLog, DocumentStore, SearchIndex, UnitKind } from '../../storage/contracts.ts'
import { escapeRecalled } from '../engrams/escape-recalled.ts'
import { contentWords, MIN_VECTOR_SIMILARITY, matchProcedures, type MatchCandidate } from '../procedures/matching.ts'
import type { ProcedureStore } from '../procedures/procedure-store.ts'
import { analyseQuery, recallText } from '../retrieval/query-analysis.ts'
import type { Retriever, RetrievalHit, RetrievalResult } from '../retrieval/search.ts'
import type { SkillStore } from '../skills/skill-store.ts'
import { groupActivity } from './activity-format.ts'
import { isForgetRecord, withoutForgotten } from '../forgetting/forgotten-texts.ts'
import { isFailureRecord } from '../failures.ts'
import { classifyMessage, type MessageType } from './classify.ts'
import { isConversational, longestExcerpt, packRelated, passageOf, type RelatedCandidate } from './conversation-excerpts.ts'
import { PASSAGE_CHARS } from '../context/passages.ts'
import { createBudgetMeter, frameCost, headingCost, type PackItem, type PackedSection, packSection, renderWithinBudget, sectionCost } from './packing.ts'
import { relatedLine } from './related-lines.ts'
import { recallThread, type ThreadSource, threadMemberHits } from '../threads/gathering-question.ts'
import { type PrimingChannel, type PrimingSettings, resolvePrimingSettings } from './settings.ts'

const PROCEDURE_LIST_TTL_MS = 2_000

/*
 * Kinds channel C recalls (profiles are channel A's; skills channel D's): engram entries, topics and
 * conversations, and the unit of every document kind the registry primes through it
 * (core/memory-kinds.ts), in the order the retriever has always been asked for them.
 */
const RELATED_ORDER: readonly UnitKind[] = ['knowledge', 'lesson', 'rule', 'topic', 'episode', 'message', 'summary', 'procedure']
const RELATED_ENTRY_KINDS: readonly UnitKind[] = ['lesson', 'rule', 'topic', 'message', 'summary']
/** Kinds channel C recalls. */
export const RELATED_KINDS: readonly UnitKind[] = inListingOrder(RELATED_ORDER, [
  ...RELATED_ENTRY_KINDS,
  ...memoryKinds().flatMap(([, spec]) => (spec.primedBy === 'related' && spec.unit !== null ? [spec.unit as UnitKind] : [])),
])
const SKILL_KINDS: UnitKind[] = ['skill', 'procedure']
/** Most related hits asked of the retriever, and the size of a short turn that sets how many. */
const RELATED_LIMIT = 400
const TOKENS_PER_SHORT_MEMORY = 24

export interface InjectedMemory {
  channel: PrimingChannel
  /** Unit id, document path, or activity pointer. */
  id: string
  kind: string
  /** File relative to the home, `conv:<id>`, or `activity/<date>.jsonl`. */
  source: string
  /** The messages, documents or log lines it stands for. */
  provenance: string[]
  tokens: number
  /** Why it was recalled: score terms for retrieval, the stage for skill matching, the rule otherwise. */
  why: Record<string, number | string>
}

/** One reason memories in a prompt are degraded, said once, and which injected memories it concerns. */
export interface DegradedNote {
  reason: string
  /** Ids of the injected memories (`InjectedMemory.id`). */
  memories: string[]
}

/**
 * Said once at the end of a block that holds degraded memories, instead of a notice on each one
 * (`PrimingResult.degraded` lists which and why).
 */
export const DEGRADED_NOTE = '(Degraded: some of these memories are extractive summaries written without an LLM and may miss details.)'

export interface PrimeInput {
  message: string
  /** The sender; their profile is channel A. With a viewer, it must be the viewer's user. */
  user?: string
  /**
   * Whose memories may be recalled (decision 0017): a session's (agent, user). Every priming on
   * behalf of a session passes it; without one, every owner's memories are candidates (benchmarks).
   */
  viewer?: Viewer
  /** The activity log(s) the viewer sees (default: the primer's). */
  activity?: ActivityLog
  /** The procedures the viewer sees (default: the primer's). */
  procedures?: ProcedureStore
  /** Leave channel A out (the caller shows the profile elsewhere, e.g. in the memory context). */
  skipProfile?: boolean
  /** The current session: its own messages are already in the conversation, so activity leaves them out. */
  sessionId?: string
  /** Now, for recency and the activity window (default the clock). */
  asOf?: Date | string
  /** Override the classification. */
  type?: MessageType
  /** Override the type's budget, in tokens. */
  budget?: number
  /**
   * Also never more than this many characters (for hosts whose model does not count in o200k
   * tokens, or that budget by characters; the retrieval benchmark passes budget × 4).
   */
  maxChars?: number
  /** Message ids already in the assembled conversation (channel C leaves them out). */
  excludeMessageIds?: Iterable<string | number>
  /**
   * A look, not a recall: what priming would inject, without counting it as an access (the
   * dashboard's "why" view; a person inspecting must not keep memories alive or change what is
   * recalled most). Default false.
   */
  inspect?: boolean
}

export interface PrimingResult {
  /** The framed block, or '' when nothing was recalled. Never more than `budget` tokens. */
  text: string
  type: MessageType
  budget: number
  /** Exact o200k tokens of `text`. */
  tokens: number
  injected: InjectedMemory[]
  /** Why some injected memories are degraded, each reason once (the text says so in one line, `DEGRADED_NOTE`). */
  degraded: DegradedNote[]
  /** Channels that failed or degraded; the others still delivered. */
  warnings: string[]
  ms: number
}

export interface PrimerDeps {
  documents: DocumentStore
  activity: ActivityLog
  /** For recording access of what was injected. */
  index: SearchIndex
  retriever: Retriever
  clock: Clock
  /** Restrict recalled units to this agent's (profiles and shared units have none and pass). */
  agent?: string
  procedures?: ProcedureStore
  skills?: SkillStore
  /**
   * The texts of the rules, lessons and profile facts the viewer's owners forgot: the activity log
   * still holds them (it is never rewritten), and recent activity keeps them out (forgotten-texts.ts).
   */
  forgotten?: (viewer: Viewer | undefined) => Promise<readonly string[]>
  /** The threads a viewer's owners hold (decision 0080), read whole when a message gathers. */
  threads?: (viewer: Viewer | undefined) => ReturnType<ThreadSource>
  settings?: Partial<PrimingSettings>
}

export interface Primer {
  readonly settings: Readonly<PrimingSettings>
  prime(input: PrimeInput): Promise<PrimingResult>
}

/**
 * What packing carries for an item: the injected memory, and why it is degraded when it is (an
 * episode summarised without an LLM) — said once for the prompt (`degraded`), not on the memory.
 */
type Meta = Omit<InjectedMemory, 'tokens'> & { degraded?: string }

const HEADINGS: Record<PrimingChannel, (user?: string) => string> = {
  profile: (user) => `### About ${escapeRecalled(user ?? 'the sender')}`,
  activity: () => '### Recent activity',
  related: () => '### Related memories',
  skills: () => '### Skills and procedures',
}

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

/** A hit's degraded reason (set by the indexer on an extractive episode section), as an injected memory's field. */
function degradedOf(hit: RetrievalHit): { degraded?: string } {
  const reason = hit.unit.meta?.degraded
  return typeof reason === 'string' && reason !== '' ? { degraded: reason } : {}
}

/** An item's meta as the injected memory it reports (its degraded reason goes to the prompt's one note instead). */
function asInjected(meta: Meta, tokens: number): InjectedMemory {
  const { degraded: _degraded, ...memory } = meta
  return { ...memory, tokens }
}

/** Each reason once, with the memories it concerns. */
function degradedNotes(injected: ReadonlyArray<Meta>): DegradedNote[] {
  const byReason = new Map<string, string[]>()
  for (const memory of injected) {
    if (memory.degraded === undefined) continue
    byReason.set(memory.degraded, [...(byReason.get(memory.degraded) ?? []), memory.id])
  }
  return [...byReason].map(([reason, memories]) => ({ reason, memories }))
}

function whyOf(hit: RetrievalHit): Record<string, number> {
  const round = (n: number): number => Math.round(n * 1000) / 1000
  return { score: round(hit.score), ...Object.fromEntries(Object.entries(hit.terms).map(([k, v]) => [k, round(v)])) }
}

/**
 * What ties an index-stage skill or procedure to the message (decision 0047): content words in
 * common — two, or one when the message has no more than two ("the quokka?" is about its one
 * word; "deploy the new release" is not about everything that says "new") — or, when the dense
 * channel compared raw vectors (KNN), the similarity the matcher's own vector stage asks. Recency,
 * frequency and graph terms are left out: they say the unit was recent or shown before, not that
 * this message is about it (counting its own showings kept an unrelated procedure alive).
 * Undefined when nothing does: an incidental match.
 */
function indexEvidence(hit: RetrievalHit, messageWords: ReadonlySet<string>, dense: RetrievalResult['stats']['dense']): string | undefined {
  const shared = [...contentWords(hit.unit.text)].filter((word) => messageWords.has(word))
  if (shared.length > 0 && shared.length >= Math.min(2, Math.ceil(messageWords.size / 2))) return `shared words: ${shared.join(', ')}`
  if (dense === 'knn' && hit.terms.dense >= MIN_VECTOR_SIMILARITY) return `similarity ${hit.terms.dense.toFixed(2)}`
  return undefined
}

/** A primer over the given stores; settings resolved and checked once. */
export function createPrimer(deps: PrimerDeps): Primer {
  const settings = Object.freeze(resolvePrimingSettings(deps.settings))

  async function profileItems(user: string | undefined): Promise<Array<PackItem<Meta>>> {
    if (user === undefined || user.trim() === '') return []
    const doc = await deps.documents.read('user', userKey(user))
    if (!doc) return []
    const lines = doc.body
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
    // One item per line, so a long profile is cut at a line, and all of them are one injected memory.
    return lines.map((line) => ({
      text: `- ${escapeRecalled(line.replace(/^[-*]\s+/, ''))}`,
      meta: { channel: 'profile', id: doc.path, kind: 'user', source: doc.path, provenance: [doc.path], why: { match: 'exact user lookup', user } },
    }))
  }

  async function activityItems(log: ActivityLog, asOf: Date, sessionId: string | undefined, viewer: Viewer | undefined, fits: (text: string) => boolean): Promise<Array<PackItem<Meta>>> {
    const since = new Date(asOf.getTime() - settings.activityHours * 3_600_000).toISOString()
    const read = await log.read({ since, until: asOf.toISOString(), limit: settings.activityEvents })
    // A forgotten text can only be in lines older than its forgetting: with no forgetting in the
    // window, there is nothing to keep out (and the archives are not read).
    const forgotten = deps.forgotten && read.some(isForgetRecord) ? await deps.forgotten(viewer) : []
    // A model failure is for the operator (turn.warnings, doctor), not something the agent did.
    const records = withoutForgotten(read, forgotten).reverse().filter((record) => !isFailureRecord(record))
    const outside = sessionId === undefined ? records : records.filter((r) => !(r.session === sessionId && (r.type === 'message_received' || r.type === 'response_sent')))
    // Newest first: packing keeps the most recent that fit; they are put back in order afterwards.
    return groupActivity(outside)
      .reverse()
      .map((block) => ({
        // A stretch too long for the channel's share is said in brief rather than left out.
        text: block.compact !== undefined && !fits(block.text) ? block.compact : block.text,
        meta: {
          channel: 'activity',
          id: block.pointer,
          kind: 'activity',
          source: block.pointer.split('#')[0] ?? block.pointer,
          provenance: block.refs,
          // What the line stands for: how many events, and from when (the line itself says what they were).
          why: { group: block.kind, events: block.refs.length, at: block.latestTs },
        },
      }))
  }

  async function relatedHits(message: string, input: PrimeInput, type: MessageType, asOf: Date, share: number): Promise<{ hits: RetrievalHit[]; dense: RetrievalResult['stats']['dense'] }> {
    // Enough candidates to fill the share with short turns (packing skips those that do not fit
    // and goes on down the ranking); the retriever bounds the work.
    const limit = Math.max(3, Math.min(RELATED_LIMIT, Math.round(share / TOKENS_PER_SHORT_MEMORY)))
    // One search serves channels C and D: skills ranked among everything else are the ones that
    // matter to this message (a second, skills-only search cost a third of priming at 100k units).
    const result = await deps.retriever.search(message, {
      kinds: [...RELATED_KINDS, 'skill'],
      limit,
      asOf,
      recordAccess: false,
      // A question or a request is answered: the instructions set for every answer apply to it; a greeting asks for nothing they shape.
      answering: type === 'question' || type === 'request',
      excludeMessageIds: input.excludeMessageIds,
      ...(input.viewer ? { viewer: input.viewer } : {}),
    })
    return { hits: result.hits.filter((hit) => deps.agent === undefined || hit.unit.agent === undefined || hit.unit.agent === deps.agent), dense: result.stats.dense }
  }

  /**
   * A long message is indexed as passages (context/passages.ts); priming shows the whole message,
   * once, where its best passage ranked, when the whole fits one excerpt's share (`longest` tokens,
   * counted as characters / 4); else the passage that matched, with a pointer to the whole
   * (conversation-excerpts.ts). Only messages short enough to fit are read back.
   */
  async function wholeMessages(hits: RetrievalHit[], longest: number): Promise<RetrievalHit[]> {
    const fits = new Map<number, number>()
    for (const hit of hits) {
      const part = passageOf(hit.unit)
      // Every passage but the last holds at least half a window: more than that cannot fit.
      if (part !== undefined && part.count > 1 && ((part.count - 1) * PASSAGE_CHARS) / 2 <= longest * 4) fits.set(part.messageId, part.count)
    }
    if (fits.size === 0) return hits
    const ids = [...fits].flatMap(([messageId, count]) => Array.from({ length: count }, (_, i) => `msg:${messageId}#p${i + 1}`))
    const byId = new Map((await deps.index.get(ids)).map((unit) => [unit.id, unit]))
    const whole = new Map<number, string>()
    for (const [messageId, count] of fits) {
      const parts = Array.from({ length: count }, (_, i) => byId.get(`msg:${messageId}#p${i + 1}`))
      if (parts.some((unit) => unit === undefined)) continue
      const text = parts.map((unit) => unit?.text ?? '').join('')
      if (text.length <= longest * 4) whole.set(messageId, text)
    }
    const shown = new Set<number>()
    const out: RetrievalHit[] = []
    for (const hit of hits) {
      const part = passageOf(hit.unit)
      const text = part === undefined ? undefined : whole.get(part.messageId)
      if (part === undefined || text === undefined) {
        out.push(hit)
        continue
      }
      if (shown.has(part.messageId)) continue
      shown.add(part.messageId)
      const { messageId: _id, passage: _passage, passages: _passages, from: _from, to: _to, ...meta } = hit.unit.meta ?? {}
      out.push({ ...hit, unit: { ...hit.unit, id: `msg:${part.messageId}`, text, meta } })
    }
    return out
  }

  // Listing procedures reads and parses every procedure file (≈9 ms for 20 files); priming runs
  // before every turn, so the list is reused for a moment. A procedure written in the last two
  // seconds is still found by stage 3 (the index) meanwhile.
  const procedureCache = new WeakMap<ProcedureStore, { at: number; list: Promise<Awaited<ReturnType<ProcedureStore['list']>>> }>()
  function listProcedures(store: ProcedureStore | undefined): Promise<Awaited<ReturnType<ProcedureStore['list']>>> {
    if (!store) return Promise.resolve([])
    const now = performance.now()
    const known = procedureCache.get(store)
    if (known && now - known.at <= PROCEDURE_LIST_TTL_MS) return known.list
    const list = store.list()
    procedureCache.set(store, { at: now, list })
    list.catch(() => procedureCache.delete(store))
    return list
  }

  /**
   * Channel D: the matcher's stages 1–2 over the stores, then the skills and procedures among
   * `indexHits` (stage 3) that the message bears on (`evidence`); the others are no match.
   */
  async function skillItems(
    message: string,
    indexHits: readonly RetrievalHit[],
    evidence: ReadonlyMap<string, string>,
    procedureStore: ProcedureStore | undefined,
  ): Promise<Array<PackItem<Meta>>> {
    const items: Array<PackItem<Meta>> = []
    const taken = new Set<string>()
    if (procedureStore || deps.skills) {
      const [procedures, skills] = await Promise.all([listProcedures(procedureStore), deps.skills?.listSummaries() ?? []])
      const candidates: MatchCandidate[] = [
        ...procedures.map((p) => ({ kind: 'procedure' as const, id: p.slug, description: p.description })),
        ...skills.map((s) => ({ kind: 'skill' as const, id: s.label, name: s.name, whenToUse: s.when_to_use })),
      ]
      const bySlug = new Map(procedures.map((p) => [p.slug, p]))
      const bySkill = new Map(skills.map((s) => [s.label, s]))
      // Stages 1 and 2 here; stage 3 (similarity) through the index below, whose vectors are already computed.
      const { matches } = await matchProcedures(message, candidates, { limit: settings.skillMatches })
      for (const match of matches) {
        const procedure = match.kind === 'procedure' ? bySlug.get(match.id) : undefined
        const skill = match.kind === 'skill' ? bySkill.get(match.id) : undefined
        const description = procedure?.description ?? (skill ? `${skill.name}: ${skill.when_to_use}` : '')
        const source = procedure?.path ?? `skills/${match.id}`
        taken.add(source)
        items.push({
          text: `- [${match.kind} ${escapeRecalled(match.id)}] ${escapeRecalled(description)}${procedure ? ` (-> ${procedure.path})` : ' (recall_skill)'}`,
          meta: { channel: 'skills', id: source, kind: match.kind, source, provenance: [source], why: { stage: match.stage, score: Math.round(match.score * 1000) / 1000, reason: match.reason } },
        })
      }
    }
    for (const hit of indexHits) {
      if (items.length >= settings.skillMatches) break
      const reason = evidence.get(hit.unit.id)
      if (!SKILL_KINDS.includes(hit.unit.kind) || reason === undefined || taken.has(hit.unit.source)) continue
      taken.add(hit.unit.source)
      items.push({
        text: relatedLine(hit.unit, Math.min(settings.itemTokens, 80), new Set()),
        meta: { channel: 'skills', id: hit.unit.id, kind: hit.unit.kind, source: hit.unit.source, provenance: hit.provenance, why: { stage: 'index', ...whyOf(hit), reason } },
      })
    }
    return items
  }

  return {
    settings,
    async prime(input) {
      const started = performance.now()
      if (typeof input?.message !== 'string') throw invalid('prime() needs the message text.', 'Pass { message: "…" }.')
      const asOf = input.asOf === undefined ? deps.clock.now() : new Date(input.asOf)
      if (Number.isNaN(asOf.getTime())) throw invalid(`asOf must be a date or ISO-8601 instant, got ${JSON.stringify(input.asOf)}.`, 'Pass asOf as new Date(...) or its toISOString().')
      // A pasted document or log is recalled from its beginning and end: the work of priming does not grow with the message.
      const message = recallText(input.message, settings.queryChars)
      const type = input.type ?? classifyMessage(message)
      const budget = input.budget ?? settings.budgets[type]
      if (!(Number.isInteger(budget) && budget >= 0)) throw invalid(`budget must be a whole number of tokens ≥ 0, got ${budget}.`, 'Pass a budget such as 1500, or leave it out to use the message type’s.')
      if (input.maxChars !== undefined && !(Number.isInteger(input.maxChars) && input.maxChars >= 0)) {
        throw invalid(`maxChars must be a whole number of characters ≥ 0, got ${input.maxChars}.`, 'Pass maxChars such as 6000, or leave it out to count tokens only.')
      }
      if (input.viewer !== undefined && input.user !== undefined && input.user !== input.viewer.user) {
        throw invalid(
          `prime() was asked for the profile of ${JSON.stringify(input.user)} on behalf of ${JSON.stringify(input.viewer.user ?? null)}.`,
          'A session primes with its own user only; leave user out or pass the viewer’s user.',
        )
      }
      const meter = createBudgetMeter(budget, input.maxChars)
      const shares = settings.shares[type]
      const warnings: string[] = []
      const body = budget - frameCost(meter)
      const share = (channel: PrimingChannel): number => Math.max(0, Math.floor(body * shares[channel]))

      // A failing channel degrades priming; it does not cancel the turn.
      const guard = async <T>(channel: PrimingChannel, run: () => Promise<T>, fallback: T): Promise<T> => {
        if (body <= 0) return fallback
        try {
          return await run()
        } catch (error) {
          warnings.push(`${channel}: ${describeError(error)}`)
          return fallback
        }
      }
      // "hi, how are you?" has no content word to associate from; searching its function words
      // would score most of the index (measured: the p95 of priming at 1M units) for nothing.
      const associative = !analyseQuery(message, 16).onlyStopWords
      // Read once: the search and the thread's members both leave these messages out.
      const excluded = new Set([...(input.excludeMessageIds ?? [])].map(String))
      const [profile, activity, found, thread] = await Promise.all([
        guard('profile', () => (input.skipProfile ? Promise.resolve([]) : profileItems(input.user ?? input.viewer?.user)), []),
        guard('activity', () => activityItems(input.activity ?? deps.activity, asOf, input.sessionId, input.viewer, (text) => meter.line(text) + headingCost(HEADINGS.activity(), meter) <= share('activity')), []),
        // Related memories get whatever the other channels leave, so ask for enough to fill the body.
        guard('related', async () => (associative ? relatedHits(message, { ...input, excludeMessageIds: excluded }, type, asOf, body) : { hits: [], dense: 'off' as const }), { hits: [], dense: 'off' as const }),
        // A question about order, change or the whole story recalls its thread (decision 0080).
        guard('related', async () => (associative ? recallThread(() => deps.threads?.(input.viewer) ?? Promise.resolve([]), message) : undefined), undefined),
      ])
      // The threads' turns come first, in time order, each packed as the message it is, under its day.
      const members = thread === undefined ? [] : (await threadMemberHits(deps.index, thread)).filter((hit) => (deps.agent === undefined || hit.unit.agent === undefined || hit.unit.agent === deps.agent) && !hit.provenance.every((id) => excluded.has(id)))
      const memberUnits = new Set(members.map((hit) => hit.unit.id))
      // Skills and procedures the index found are shown only on evidence the message bears on them.
      const messageWords = contentWords(message)
      const evidence = new Map<string, string>()
      for (const hit of found.hits) {
        if (!SKILL_KINDS.includes(hit.unit.kind)) continue
        const reason = indexEvidence(hit, messageWords, found.dense)
        if (reason !== undefined) evidence.set(hit.unit.id, reason)
      }
      const skills = await guard('skills', async () => (associative ? skillItems(message, found.hits, evidence, input.procedures ?? deps.procedures) : []), [])
      // Skills are channel D's; procedures it did not show may still be related memories, when the message bears on them.
      const ordinary = found.hits.filter((hit) => hit.unit.kind !== 'skill' && (hit.unit.kind !== 'procedure' || evidence.has(hit.unit.id)))
      // The standing instructions that apply are packed first (a few short lines, the answer's frame), then a
      // gathering question's thread turns in time order, then the rest.
      const relatedOf = (hits: RetrievalHit[], story: RetrievalHit[]): RetrievalHit[] => [...hits.filter((hit) => hit.applies), ...story, ...hits.filter((hit) => !hit.applies)]

      const profileSection = packSection('profile', HEADINGS.profile(input.user), profile, share('profile'), meter)
      const activitySection = packSection('activity', HEADINGS.activity(), activity, share('activity'), meter)
      activitySection.items.reverse()
      const skillsSection = packSection('skills', HEADINGS.skills(), skills, share('skills'), meter)
      // Unused shares flow to related memories.
      const relatedBudget = Math.max(0, body - sectionCost(profileSection, meter) - sectionCost(activitySection, meter) - sectionCost(skillsSection, meter))
      const shownSkills = new Set(skillsSection.items.map((item) => item.meta.source))
      const activityText = activitySection.items.map((item) => item.text).join('\n')
      // Packs the other channels' sections (copies: rendering drops items) with one list of related memories.
      const pack = async (related: RetrievalHit[]) => {
        const relatedCandidates: Array<RelatedCandidate<Meta>> = (await wholeMessages(related, longestExcerpt(relatedBudget, settings.itemTokens)))
          // A tool's result is what the agent read while it worked, not a memory: what it made of it is in its own reply.
          .filter((hit) => !shownSkills.has(hit.unit.source) && hit.unit.meta?.role !== 'tool')
          .map((hit) => ({
            unit: hit.unit,
            ...(isConversational(hit.unit) ? {} : { compact: (said: (line: string) => boolean) => relatedLine(hit.unit, settings.itemTokens, messageWords, said) }),
            meta: { channel: 'related', id: hit.unit.id, kind: hit.unit.kind, source: hit.unit.source, provenance: hit.provenance, why: whyOf(hit), ...degradedOf(hit) },
          }))
        // The degraded note is one line for the whole block: its room is kept when a candidate may need it.
        const noteCost = relatedCandidates.some((candidate) => candidate.meta.degraded !== undefined) ? meter.line(DEGRADED_NOTE) + 1 : 0
        const relatedPack = packRelated('related', HEADINGS.related(), relatedCandidates, Math.max(0, relatedBudget - noteCost), meter, settings.itemTokens, activityText)
        const sections: Array<PackedSection<Meta>> = [profileSection, activitySection, relatedPack.section, skillsSection].map((section) => (section === relatedPack.section ? section : { ...section, items: [...section.items] }))
        const rendered = renderWithinBudget(sections, meter, ['related', 'activity', 'skills', 'profile'], noteCost)
        const injected: InjectedMemory[] = []
        const shownDegraded: Meta[] = []
        if (rendered.text !== '') {
          for (const section of sections) {
            if (section === relatedPack.section) {
              // Excerpt groups hold several memories each: list every one shown.
              for (const item of relatedPack.packed()) {
                injected.push(asInjected(item.meta, item.tokens))
                if (item.meta.degraded !== undefined) shownDegraded.push(item.meta)
              }
              continue
            }
            for (const item of section.items) {
              // Profile lines are one memory: merge them.
              const same = injected.find((m) => m.channel === section.channel && m.id === item.meta.id)
              if (same) same.tokens += item.tokens
              else injected.push(asInjected(item.meta, item.tokens))
            }
          }
        }
        return { rendered, injected, shownDegraded }
      }
      const { rendered, injected, shownDegraded } = await pack(relatedOf(ordinary.filter((hit) => !memberUnits.has(hit.unit.id)), members))

      const degraded = degradedNotes(shownDegraded)
      const text = degraded.length > 0 ? `${rendered.text}\n\n${DEGRADED_NOTE}` : rendered.text
      const tokens = degraded.length > 0 ? countTokensByLine(text) : rendered.tokens

      // The Hebbian term: what priming put in front of the agent was recalled. A skill or procedure
      // is not: it is credited a use when the session follows it (procedures/use-crediting.ts). A
      // gathering question's story is not either: its turns are shown because a thread holds them, not
      // recalled by the message, and the turns it displaced were. Its access record is what the message
      // alone would have shown, so the story changes no later recall (decision 0080).
      const recalled = members.length === 0 ? injected : (await pack(relatedOf(ordinary, []))).injected
      const recalledUnits = recalled.filter((m) => m.channel === 'related' && !SKILL_KINDS.includes(m.kind as UnitKind)).map((m) => m.id)
      if (recalledUnits.length > 0 && input.inspect !== true) {
        try {
          await deps.index.recordAccess(recalledUnits, deps.clock.now().toISOString())
        } catch (error) {
          warnings.push(`access: ${describeError(error)}`)
        }
      }
      return { text, type, budget, tokens, injected, degraded, warnings, ms: performance.now() - started }
    },
  }
}
