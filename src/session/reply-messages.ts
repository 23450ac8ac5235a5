/**
 * A turn's reply on its way into the context store (decision 0019): text, or the AI SDK's
 * `result.response.messages` as they are. Each message is stored with a plain-text rendering as
 * its `content` (what search, summaries, token counts and `expand` read) and, when it has more than
 * text, its parts in `meta.parts`, so tool calls and results come back exactly as they were.
 */
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { MessageInput } from '../core/message.ts'
import { hasStructure, normalizeParts, partsOf, renderParts, spokenText } from '../core/message-parts.ts'
import type { TurnReply } from './turn.ts'

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

const FIX = 'Pass the reply text, or the messages of the turn (AI SDK: session.end(turn, result.response.messages)).'

/**
 * The reply as messages to append, validated before anything is written (one bad message refuses
 * the reply, naming it). `at` is the time every message gets.
 */
export function replyToMessages(reply: TurnReply, at: string): MessageInput[] {
  if (typeof reply === 'string') return [{ role: 'assistant', content: reply, at }]
  if (!Array.isArray(reply)) throw invalid('The reply is neither text nor a list of messages.', FIX)
  return reply.map((message, i): MessageInput => {
    if (typeof message !== 'object' || message === null) throw invalid(`reply[${i}] is not a message.`, FIX)
    if (message.role !== 'assistant' && message.role !== 'tool') {
      throw invalid(`reply[${i}].role ${JSON.stringify(message.role)} is not a reply role.`, `A reply holds assistant and tool messages; the user's message was stored by begin(). ${FIX}`)
    }
    const name = typeof message.name === 'string' ? { name: message.name } : {}
    if (typeof message.content === 'string') return { role: message.role, content: message.content, at, ...name }
    if (!Array.isArray(message.content)) throw invalid(`reply[${i}].content must be text or a list of parts.`, FIX)
    const parts = normalizeParts(message.content, `reply[${i}].content`)
    return { role: message.role, content: renderParts(parts), at, ...name, ...(hasStructure(parts) ? { meta: { parts } } : {}) }
  })
}

/** What a stored reply message said in words (for the activity log and identity): its text parts. */
export function saidText(message: MessageInput): string {
  const parts = partsOf(message.meta)
  return parts ? spokenText(parts) : message.content
}
