/**
 * Identity extraction (Anton's Default Mode Network): every few turns, the user's recent messages
 * are checked for facts about who they are, and those facts are merged into profile.md by key
 * ("Name: …" replaces "Name: …"). With a model, the fast tier extracts them; without one, or when
 * the call fails, explicit statements are picked out by patterns ("my name is", "I live in",
 * "I prefer", "call me", "I work at/as", "my timezone is") and the result says so
 * (`method: 'explicit'`). Facts go through `encode()` like every other memory.
 */
import { z } from 'zod'
import { describeError } from '../../core/errors.ts'
import { headAndTail } from '../../core/excerpt.ts'
import type { Engram } from '../../core/engram.ts'
import type { Llm } from '../../llm/contracts.ts'
import { ownerOfUser } from '../../core/owner.ts'
import type { EngramStore } from '../../storage/contracts.ts'
import type { EngramEncoder } from './encode.ts'
import type { EncodeReport } from './encoder.ts'
import type { UserProfiles } from './user-profiles.ts'

/** Characters of one user message identity extraction reads (its first and last halves when longer). */
const IDENTITY_MESSAGE_CHARS = 4_000

/** Anton fires identity extraction every 5 conversation turns. */
export const IDENTITY_EVERY_TURNS = 5

export interface ConversationMessage {
  role: string
  content: string
}

export type IdentityUpdate =
  | { kind: 'updated'; method: 'llm' | 'explicit'; facts: string[]; report: EncodeReport; llmError?: string }
  | { kind: 'skipped'; reason: string }

export interface IdentityUpdaterOptions {
  encoder: EngramEncoder
  /** The agent's global store: its profile.md is the identity of sessions without a user. */
  global: EngramStore
  /** Users' profiles: in a session with a user, facts about them go there (decision 0017). */
  profiles?: UserProfiles
  /** Without one (or when unavailable) only explicit statements are extracted. */
  llm?: Llm
  everyTurns?: number
  timeoutMs?: number
}

export interface IdentityUpdater {
  /**
   * Runs on every `everyTurns`-th turn (turn numbers start at 1), looking at the user messages
   * among `messages` (the recent turns). With `user`, the facts go into that user's profile;
   * without, into the agent's profile.md. Never throws for a model failure.
   */
  maybeUpdateIdentity(messages: ConversationMessage[], turnNumber: number, context?: { user?: string }): Promise<IdentityUpdate>
}

const identitySchema = z.object({
  facts: z
    .array(z.string().describe('One fact as "Key: value", e.g. "Name: Jorge", "Timezone: PST", "Tools: prefers uv over pip".'))
    .describe('Facts about the user themselves that the messages state explicitly. Empty when there are none. Use the same key as the current profile when a fact updates it.'),
})

const SYSTEM = [
  'You maintain the profile of the user an assistant works with: short "Key: value" facts about who they are',
  '(name, location, timezone, work, expertise, preferences, communication style, tools).',
  'Extract only facts the user states about themselves in the messages; never guess, never include facts about',
  'other people or the task at hand. Answer with an empty list when there is nothing new.',
].join(' ')

// Values end at sentence punctuation, a conjunction that starts another clause, or a time that
// says when rather than what ("I moved to Lisbon last month").
const VALUE = String.raw`([^.,;!?\n]+?)(?=\s*(?:[.,;!?\n]|\s+(?:and|but|so|because)\s|\s+(?:last|this|next|since|yesterday|today|now|recently)\b|$))`

const PATTERNS: Array<{ pattern: RegExp; fact: (value: string) => string }> = [
  { pattern: new RegExp(String.raw`\bmy name is\s+${VALUE}`, 'gi'), fact: (v) => `Name: ${v}` },
  { pattern: new RegExp(String.raw`\bcall me\s+${VALUE}`, 'gi'), fact: (v) => `Name: ${v}` },
  { pattern: new RegExp(String.raw`\bmy time ?zone is\s+${VALUE}`, 'gi'), fact: (v) => `Timezone: ${v}` },
  { pattern: new RegExp(String.raw`\bI live in\s+${VALUE}`, 'gi'), fact: (v) => `Location: ${v}` },
  // A change of place or of a value is the same fact under its key: the newer one replaces it.
  { pattern: new RegExp(String.raw`\bI(?:'ve| have)? (?:just |recently )?(?:moved|relocated) to\s+${VALUE}`, 'gi'), fact: (v) => `Location: ${v}` },
  { pattern: new RegExp(String.raw`\bI(?:'m| am) (?:now )?(?:living|based) in\s+${VALUE}`, 'gi'), fact: (v) => `Location: ${v}` },
  { pattern: new RegExp(String.raw`\bmy budget is (?:now )?${VALUE}`, 'gi'), fact: (v) => `Budget: ${v}` },
  { pattern: new RegExp(String.raw`\bI work at\s+${VALUE}`, 'gi'), fact: (v) => `Works at: ${v}` },
  { pattern: new RegExp(String.raw`\bI work as\s+(?:an?\s+)?${VALUE}`, 'gi'), fact: (v) => `Role: ${v}` },
  { pattern: new RegExp(String.raw`\bI prefer\s+${VALUE}`, 'gi'), fact: (v) => `Prefers ${v}` },
]

/**
 * Explicit self-statements in `text`, as profile facts. Deterministic and offline. "I prefer"
 * facts have no key (a person has many preferences; a new one must not replace the others).
 */
export function extractExplicitFacts(text: string): string[] {
  const facts: string[] = []
  for (const { pattern, fact } of PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const value = match[1]?.trim().replace(/\s+/g, ' ')
      // A long capture is a sentence, not a value ("my name is not important here …").
      if (!value || value.length > 60 || value.split(' ').length > 6 || /^(not|no|never)\b/i.test(value)) continue
      const line = fact(value)
      if (!facts.includes(line)) facts.push(line)
    }
  }
  return facts
}

/** Creates the updater; the turn counter is the caller's (the session knows its turns). */
export function createIdentityUpdater(options: IdentityUpdaterOptions): IdentityUpdater {
  const every = options.everyTurns ?? IDENTITY_EVERY_TURNS
  return {
    async maybeUpdateIdentity(messages, turnNumber, context = {}) {
      const user = context.user
      if (options.encoder.mode === 'off') return { kind: 'skipped', reason: 'memory mode is off' }
      if (!Number.isInteger(turnNumber) || turnNumber < 1 || turnNumber % every !== 0) {
        return { kind: 'skipped', reason: `runs every ${every} turns; this is turn ${turnNumber}` }
      }
      const userText = messages
        .filter((message) => message.role === 'user' && typeof message.content === 'string')
        // A pasted document says little about who the user is: its beginning and end are enough, and bound the call.
        .map((message) => headAndTail(message.content, IDENTITY_MESSAGE_CHARS, () => '\n…\n'))
        .join('\n\n')
      if (userText.trim() === '') return { kind: 'skipped', reason: 'no user messages' }

      let facts: string[] | undefined
      let llmError: string | undefined
      if (options.llm?.available) {
        try {
          const current = user !== undefined && options.profiles ? await options.profiles.facts(user) : await options.global.recallIdentity()
          const profile = current.map((entry) => `- ${entry.text}`).join('\n') || '(empty)'
          const answer = await options.llm.generateObject({
            schema: identitySchema,
            name: 'identity_facts',
            system: SYSTEM,
            messages: [{ role: 'user', content: `Current profile:\n${profile}\n\nThe user's recent messages:\n${userText}` }],
            tier: 'fast',
            ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          })
          facts = answer.facts.map((fact) => fact.replace(/\s+/g, ' ').trim()).filter((fact) => fact.length > 0 && fact.length <= 200)
        } catch (error) {
          llmError = describeError(error)
        }
      }
      const method = facts ? 'llm' : 'explicit'
      const found = facts ?? extractExplicitFacts(userText)
      if (found.length === 0) return { kind: 'skipped', reason: llmError ? `no explicit facts (the model call failed: ${llmError})` : 'no identity facts in these messages' }
      const engrams: Engram[] = found.map((text) => ({
        text,
        kind: 'profile',
        scope: 'global',
        // The user said it in so many words; a model's reading of it is less certain.
        confidence: method === 'explicit' ? 'high' : 'medium',
        source: method === 'explicit' ? 'user' : 'llm',
        owner: ownerOfUser(user),
      }))
      const report = await options.encoder.encode(engrams, user === undefined ? {} : { user })
      return { kind: 'updated', method, facts: found, report, ...(llmError ? { llmError } : {}) }
    },
  }
}
