/**
 * The `retrieval-eval/1` data format (../shared/bench/FORMAT.md): conversations with sessions of
 * turns, and questions with the ids of the turns that hold their answer. Loaded and checked here;
 * the data itself never lives in this repository.
 */
import { readFileSync } from 'node:fs'
import { EngramError, ErrorCode } from '../core/errors.ts'

export interface EvalTurn {
  id: string
  speaker: string
  text: string
  at?: string | null
  /** Who said it when the conversation is the agent's own with a user (FORMAT.md); absent otherwise. */
  role?: 'user' | 'assistant'
}

export interface EvalSession {
  id: string
  started_at: string | null
  turns: EvalTurn[]
}

export interface EvalQuestion {
  id: string
  question: string
  answer?: unknown
  category: string
  evidence: string[]
  stale_evidence?: string[]
  asked_at?: string | null
}

export interface EvalConversation {
  id: string
  participants: string[]
  sessions: EvalSession[]
  questions: EvalQuestion[]
}

export interface EvalDataset {
  format: 'retrieval-eval/1'
  name: string
  conversations: EvalConversation[]
}

function bad(path: string, message: string): EngramError {
  return new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `${path}: ${message}`,
    fix: 'Pass a file in the retrieval-eval/1 format described in ../shared/bench/FORMAT.md (e.g. ../shared/bench/locomo10.eval.json).',
  })
}

const isString = (value: unknown): value is string => typeof value === 'string'

/** Parse and check a retrieval-eval/1 document. Throws `invalid_argument` naming the first bad field. */
export function parseEvalDataset(text: string, path = 'dataset'): EvalDataset {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (error) {
    throw bad(path, `is not JSON (${(error as Error).message}).`)
  }
  const d = doc as Partial<EvalDataset>
  if (d?.format !== 'retrieval-eval/1') throw bad(path, `format must be "retrieval-eval/1", got ${JSON.stringify(d?.format)}.`)
  if (!Array.isArray(d.conversations)) throw bad(path, 'conversations must be an array.')
  d.conversations.forEach((c, ci) => {
    const at = `conversations[${ci}]`
    if (!isString(c?.id)) throw bad(path, `${at}.id must be a string.`)
    if (!Array.isArray(c.sessions) || !Array.isArray(c.questions)) throw bad(path, `${at} needs sessions and questions arrays.`)
    c.participants = Array.isArray(c.participants) ? c.participants.filter(isString) : []
    const turnIds = new Set<string>()
    c.sessions.forEach((s, si) => {
      if (!isString(s?.id) || !Array.isArray(s.turns)) throw bad(path, `${at}.sessions[${si}] needs an id and a turns array.`)
      if (s.started_at !== null && s.started_at !== undefined && Number.isNaN(Date.parse(asInstant(s.started_at)))) throw bad(path, `${at}.sessions[${si}].started_at is not a date.`)
      s.turns.forEach((t, ti) => {
        if (!isString(t?.id) || !isString(t.speaker) || !isString(t.text)) throw bad(path, `${at}.sessions[${si}].turns[${ti}] needs string id, speaker and text.`)
        if (t.role !== undefined && t.role !== 'user' && t.role !== 'assistant') throw bad(path, `${at}.sessions[${si}].turns[${ti}].role must be "user" or "assistant", got ${JSON.stringify(t.role)}.`)
        turnIds.add(t.id)
      })
    })
    c.questions.forEach((q, qi) => {
      if (!isString(q?.id) || !isString(q.question) || !isString(q.category) || !Array.isArray(q.evidence) || q.evidence.length === 0) {
        throw bad(path, `${at}.questions[${qi}] needs id, question, category and a non-empty evidence array.`)
      }
      const unknown = q.evidence.find((id) => !turnIds.has(id))
      if (unknown !== undefined) throw bad(path, `${at}.questions[${qi}] cites evidence ${JSON.stringify(unknown)}, which is no turn of the conversation.`)
    })
  })
  return { format: 'retrieval-eval/1', name: isString(d.name) ? d.name : path, conversations: d.conversations as EvalConversation[] }
}

/** Read and check a retrieval-eval/1 file. */
export function loadEvalDataset(path: string): EvalDataset {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new EngramError({
      code: ErrorCode.notFound,
      category: 'user',
      message: `Cannot read ${path}: ${(error as Error).message}`,
      fix: 'Pass the path of a retrieval-eval/1 file, e.g. ../shared/bench/locomo10.eval.json.',
    })
  }
  return parseEvalDataset(text, path)
}

/**
 * Timestamps in the format are local times without a zone; they are read as UTC so that day
 * boundaries and intervals are kept exactly (the memory under test has no time zone of its own).
 */
export function asInstant(local: string): string {
  return /[zZ]|[+-]\d\d:?\d\d$/.test(local) ? local : `${local}Z`
}
