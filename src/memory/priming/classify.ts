/**
 * Which kind of message is this? Decides how much recalled memory priming may inject (the seed's
 * dynamic budget: greeting 500, question 1500, request 3000, heartbeat 200 tokens). Rules only —
 * no LLM on the hot path (principle 7) — on triggers, greetings, question marks and words,
 * imperative verbs, and length. A message in another language with a table (decision 0077) is
 * classified by the same steps over its table's words; English keeps its own rules below.
 */
import { detectLanguage } from '../../text/languages/detect.ts'
import { allLanguages, type Language, normaliseForMatching } from '../../text/languages/language.ts'

export const MESSAGE_TYPES = ['greeting', 'question', 'request', 'heartbeat'] as const
export type MessageType = (typeof MESSAGE_TYPES)[number]

/** Scheduler triggers: `[heartbeat]`, `HEARTBEAT:`, `cron: nightly-backup`, `[cron] …`, `scheduled task …`. */
const TRIGGER = /^\s*(?:\[\s*(?:heartbeat|hb|cron|scheduled)\b[^\]]*\]|(?:heartbeat|cron)\s*[:\-—]|(?:heartbeat|cron)\s*$|scheduled (?:task|run|check)\b|periodic (?:check|patrol)\b)/i

/** The heartbeat forms of a trigger (not cron runs, not empty text): `[heartbeat]`, `[hb] …`, `HEARTBEAT:`, `periodic patrol`. */
const HEARTBEAT = /^\s*(?:\[\s*(?:heartbeat|hb)\b[^\]]*\]|heartbeat\s*(?:[:\-—]|$)|periodic (?:check|patrol)\b)/i

const GREETING = /^\s*(?:hi|hii+|hello|hey|heya|hiya|yo|howdy|greetings|good (?:morning|afternoon|evening|night|day)|morning|evening|bonjour|salut|hola|hallo|ciao|servus|moin|namaste|thanks|thank you|cheers|bye|goodbye|see you|こんにちは|おはよう|こんばんは|你好)(?=$|[\s,.!?:;)])/iu

/** Polite requests phrased as questions are still requests: "could you deploy it?". */
const POLITE_REQUEST = /^\s*(?:please\b|pls\b|kindly\b|(?:can|could|would|will) you (?:please )?(?!tell me\b|remind me (?:what|who|when|where|why|how)\b)\w+|i(?:'d| would) like you to\b|i need you to\b|let'?s\b|go ahead\b)/i

const QUESTION_WORD = /^\s*(?:what|why|how|when|where|who|whom|whose|which|is|are|am|was|were|do|does|did|can|could|should|would|will|shall|have|has|had|may|might|must|isn't|aren't|don't|doesn't|didn't|remind me)\b/i

const IMPERATIVE =
  /^\s*(?:add|analy[sz]e|apply|book|build|change|check|clean|close|commit|compare|compile|configure|convert|copy|create|debug|delete|deploy|describe|design|document|download|draft|edit|email|explain|export|extract|fetch|fill|find|fix|format|generate|get|give|implement|import|improve|install|list|load|look|make|merge|migrate|move|note|open|optimi[sz]e|order|organi[sz]e|plan|post|prepare|print|publish|push|put|read|rebuild|record|refactor|remember|remind|remove|rename|reply|report|reset|restart|restore|review|revert|rewrite|run|save|schedule|search|send|set|setup|show|sort|start|stop|submit|summari[sz]e|switch|test|translate|try|turn|update|upgrade|upload|use|verify|write)\b/i

const wordCount = (text: string): number => (text.trim().match(/\S+/g) ?? []).length

/**
 * Whether a message is a heartbeat — the agent's periodic patrol — and so a session boundary for
 * the conversations that went quiet since the previous one. Narrower than the `heartbeat` type,
 * which also covers cron triggers and empty text (they get the small priming budget, but mark no
 * boundary).
 */
export function isHeartbeatMessage(text: string): boolean {
  if (HEARTBEAT.test(text)) return true
  const language = detectLanguage(text).rules
  return language?.heartbeat.test(normaliseForMatching(text)) === true
}

/** Whether `text` opens with a greeting of any table: "Guten Morgen, wie geht's?" has too few German stop words to be detected. */
function opensWithAnyGreeting(text: string): boolean {
  const normalised = normaliseForMatching(text)
  return allLanguages().some((language) => language.greeting.test(normalised))
}

/**
 * The same steps as for English over a table's words. Words are counted by the platform's
 * segmenter (an unspaced sentence is one "word" between spaces); a question mark is any (`？`
 * and `¿…?` are normalised to `?`). One difference from English: a request marker in a message
 * that asks is a question ("请问…？", "may I ask …?"; "…を教えてください？"), not a request.
 */
function classifyInLanguage(trimmed: string, language: Language): MessageType {
  const text = normaliseForMatching(trimmed)
  if (language.heartbeat.test(text)) return 'heartbeat'
  const words = language.wordCount(text)
  const question = text.includes('?') || language.questionWord.test(text) || (language.questionEnding?.test(text) ?? false)
  if (language.greeting.test(text) && words <= 8) return 'greeting'
  if (language.request.test(text) && !text.includes('?')) return 'request'
  if (question) return 'question'
  if (language.request.test(text) || language.imperative.test(text)) return 'request'
  if (words > 60) return 'request'
  if (words <= 2) return 'greeting'
  return 'question'
}

/** Classify a message by rules (see the file comment). Empty text counts as a heartbeat: there is nothing to answer. */
export function classifyMessage(text: string): MessageType {
  const trimmed = text.trim()
  if (trimmed === '' || TRIGGER.test(trimmed)) return 'heartbeat'
  const language = detectLanguage(trimmed).rules
  if (language) return classifyInLanguage(trimmed, language)
  const words = wordCount(trimmed)
  if (POLITE_REQUEST.test(trimmed)) return 'request'
  // "hi!", "good morning, how are you?": short, opening with a greeting.
  if (words <= 8 && (GREETING.test(trimmed) || opensWithAnyGreeting(trimmed))) return 'greeting'
  if (trimmed.includes('?') || QUESTION_WORD.test(trimmed)) return 'question'
  if (IMPERATIVE.test(trimmed)) return 'request'
  // A long message without a question is a brief: instructions, a pasted spec, a bug report.
  if (words > 60) return 'request'
  if (words <= 2) return 'greeting'
  return 'question'
}
