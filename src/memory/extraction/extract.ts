/**
 * Facts from a conversation (decision 0066): what the user states about themselves, their
 * preferences, their standing instructions and the facts of their world, as candidate engrams.
 * With a model (the fast tier, structured output), the model reads the user's messages; without
 * one, the offline rules do (rules.ts). A failed model call falls back to the rules and the result
 * says so (`degraded`); the failure itself is reported by the watched LLM as every model step's is.
 * Either way the engrams go through the one write path, the encoder and its gate
 * (`encodeExtractedFacts`): nothing here writes.
 *
 * Mapping to engram kinds: who the user is and what they like is a `profile` fact (the user's own
 * profile, a snapshot); an event they report or a fact of their project is a `lesson` of theirs
 * (dated, recent first, forgotten by use — decision 0070); a standing instruction is a rule
 * (`always`, `never`, `when`).
 */
import { z } from 'zod'
import type { Engram } from '../../core/engram.ts'
import { describeError } from '../../core/errors.ts'
import { headAndTail } from '../../core/excerpt.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { EngramEntry } from '../../core/engram.ts'
import type { Owner } from '../../core/owner.ts'
import type { EncodeReport, Encoder } from '../engrams/encoder.ts'
import { ruleEngram, ruleFacts } from './rules.ts'
import { earlierFacts, type NewFact, recordValueChanges, type ValueChangeRecord, type ValueHistoryDeps } from './value-history.ts'

export type ExtractionMethod = 'rules' | 'model'

/** An extracted engram; `meta.method` says how it was found, and is kept with the entry. */
export type ExtractedEngram = Engram & { meta: { method: ExtractionMethod } }

export interface Extraction {
  engrams: ExtractedEngram[]
  method: ExtractionMethod
  /** Set when a model was configured but its call failed: the rules' facts stand in. */
  degraded?: string
}

export interface ExtractionDeps {
  /** The model; without one (or `available: false`) the offline rules extract. */
  llm?: Llm
  timeoutMs?: number
}

/** A message as a conversation holds it; only `user` messages are read. */
export interface ExtractionMessage {
  role: string
  content: string
  /** When it was said (ISO 8601): the offline rules date the events it reports ("last Friday" → the day). */
  at?: string
}

/** Characters of one user message the model reads (its first and last halves when longer). */
const MODEL_MESSAGE_CHARS = 4_000
/** Longest fact the model may hand back: one line, as every engram is. */
const MODEL_FACT_CHARS = 300

const factsSchema = z.object({
  facts: z
    .array(
      z.object({
        kind: z
          .enum(['profile', 'lesson', 'always', 'never', 'when'])
          .describe('profile: who the user is or what they prefer; lesson: an event they report or a settled fact of their project or world; always/never/when: a standing instruction to the assistant'),
        text: z.string().describe('One sentence in the third person, faithful to the user\'s words: "The user is allergic to peanuts.", "Answer in French." (for a rule, without its always/never)'),
      }),
    )
    .describe('Facts the user states explicitly. Empty when there are none.'),
})

const SYSTEM = [
  'You extract long-term memories from what a user said to an assistant: facts about the user (who they are,',
  'where they live and work, family, health, habits), their preferences, standing instructions to the assistant',
  '("always…", "never…", "when I…, …", "from now on…"), events they report (with when, as said), and facts of their',
  'world (their projects, tools, versions, results, plans they have decided). Only what the user states explicitly about themselves: never guess, never generalise, never',
  'include questions, hypotheticals, negated or reported statements of others, or what the assistant said.',
  'Rewrite each fact faithfully in the third person ("The user …"). Answer with an empty list when there is nothing.',
].join(' ')

function userMessages(messages: readonly ExtractionMessage[]): ExtractionMessage[] {
  return messages.filter((message) => message?.role === 'user' && typeof message.content === 'string' && message.content.trim() !== '')
}

function byRules(messages: readonly ExtractionMessage[]): ExtractedEngram[] {
  const engrams: ExtractedEngram[] = []
  for (const message of messages) {
    const at = typeof message.at === 'string' ? new Date(message.at) : undefined
    for (const fact of ruleFacts(message.content, at !== undefined && !Number.isNaN(at.getTime()) ? at : undefined)) {
      if (!engrams.some((known) => known.kind === fact.kind && known.text === fact.text)) engrams.push({ ...ruleEngram(fact), meta: { method: 'rules' } })
    }
  }
  return engrams
}

async function byModel(messages: readonly ExtractionMessage[], llm: Llm, timeoutMs: number | undefined): Promise<ExtractedEngram[]> {
  const transcript = messages.map(({ content: text }) => headAndTail(text, MODEL_MESSAGE_CHARS, () => '\n…\n')).join('\n\n---\n\n')
  const answer = await llm.generateObject({
    schema: factsSchema,
    name: 'conversation_facts',
    system: SYSTEM,
    messages: [{ role: 'user', content: `The user's messages:\n\n${transcript}` }],
    tier: 'fast',
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  })
  const engrams: ExtractedEngram[] = []
  for (const fact of answer.facts) {
    const text = fact.text.replace(/\s+/g, ' ').trim()
    if (text === '' || text.length > MODEL_FACT_CHARS || engrams.some((known) => known.kind === fact.kind && known.text === text)) continue
    // A model's reading of what was said is less certain than the words themselves: medium
    // confidence, so a copilot-mode gate asks the user before keeping it.
    engrams.push({ text, kind: fact.kind, scope: 'global', confidence: 'medium', source: 'llm', meta: { method: 'model' } })
  }
  return engrams
}

/**
 * The facts the user states in `messages` (the assistant's, the system's and tools' messages are
 * never read), as candidate engrams without an owner: the encoder of the user's scope gives them
 * theirs. Never throws for a model failure.
 */
export async function extractFacts(messages: readonly ExtractionMessage[], deps: ExtractionDeps = {}): Promise<Extraction> {
  const said = userMessages(messages)
  if (said.length === 0) return { engrams: [], method: deps.llm?.available ? 'model' : 'rules' }
  if (!deps.llm?.available) return { engrams: byRules(said), method: 'rules' }
  try {
    return { engrams: await byModel(said, deps.llm, deps.timeoutMs), method: 'model' }
  } catch (error) {
    return { engrams: byRules(said), method: 'rules', degraded: `the model call failed, facts extracted by rules instead: ${describeError(error)}` }
  }
}

export interface ExtractedFacts extends Extraction {
  /** What the encoder did with them: saved, duplicates, held for confirmation, suppressed, rejected. */
  report: EncodeReport
  /** Values the saved facts changed, each recorded as a superseding knowledge pair (value-history.ts); only when some. */
  changes?: ValueChangeRecord[]
}

/** Where a changed value is recorded: the owner's knowledge, beside the profile facts it may change (decision 0087). */
export interface ValueRecording extends ValueHistoryDeps {
  owner: Owner
  /** The owner's profile facts (a user's one profile; none for the agent). */
  profile(): Promise<EngramEntry[]>
}

/** When the facts of `messages` were said: the last user message's `at`, else now. */
function saidAt(messages: readonly ExtractionMessage[], recording: ValueRecording): string {
  for (const message of [...messages].reverse()) {
    if (message?.role !== 'user' || typeof message.at !== 'string') continue
    const ms = Date.parse(message.at)
    if (!Number.isNaN(ms)) return new Date(ms).toISOString()
  }
  return recording.clock.now().toISOString()
}

/**
 * The facts the encoder saved, as `recordValueChanges` compares them with what the owner had
 * recorded before (`earlier`, read before encoding: a keyed profile value replaces the earlier one
 * when it is saved). Rules are standing instructions, not values.
 */
export async function recordChangedValues(recording: ValueRecording, messages: readonly ExtractionMessage[], saved: ReadonlyArray<{ text: string; kind: string; method?: string }>, earlier: Awaited<ReturnType<typeof earlierFacts>>): Promise<ValueChangeRecord[]> {
  const at = saidAt(messages, recording)
  const facts: NewFact[] = saved.filter((fact) => fact.kind === 'lesson' || fact.kind === 'profile').map((fact) => ({ text: fact.text, at, ...(fact.method ? { method: fact.method } : {}) }))
  return facts.length === 0 ? [] : recordValueChanges(recording, recording.owner, facts, earlier)
}

/** What `owner` had recorded before a turn's facts are encoded, for `recordChangedValues`. */
export async function factsBefore(recording: ValueRecording): Promise<Awaited<ReturnType<typeof earlierFacts>>> {
  return earlierFacts(recording.backend, recording.owner, await recording.profile())
}

/**
 * Extracts the facts of `messages` and hands them to `encoder` — the encoder of the user whose
 * messages they are (`encoderFor(encoder, { user })`, a `ViewerScope`'s): their facts go to their
 * own tree, through the gate like every other memory. With `values`, a saved fact that gives a
 * subject a new value is also recorded as superseding the earlier fact (decision 0087).
 */
export async function extractAndEncodeFacts(messages: readonly ExtractionMessage[], encoder: Encoder, deps: ExtractionDeps & { values?: ValueRecording } = {}): Promise<ExtractedFacts> {
  const extraction = await extractFacts(messages, deps)
  if (extraction.engrams.length === 0) return { ...extraction, report: { saved: [], duplicates: [], pending: [], suppressed: [], rejected: [] } }
  const earlier = deps.values ? await factsBefore(deps.values) : []
  const report = await encoder.encode(extraction.engrams)
  // A duplicate counts too: a turn run again after a crash finds its facts saved, and the change not yet recorded.
  const saved = [...report.saved.map(({ engram, entry }) => ({ text: entry.text, kind: engram.kind })), ...report.duplicates].map((fact) => ({ text: fact.text, kind: fact.kind, method: extraction.method }))
  const changes = deps.values ? await recordChangedValues(deps.values, messages, saved, earlier) : []
  return { ...extraction, report, ...(changes.length > 0 ? { changes } : {}) }
}
