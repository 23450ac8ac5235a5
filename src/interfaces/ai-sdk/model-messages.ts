/**
 * Between the AI SDK's language-model level (what a middleware sees: the provider prompt and the
 * model's content parts) and engram's turns: `turn.messages` as prompt messages, and the model's
 * output as the reply parts `session.end` stores. The types are derived from the `ai` package's
 * `LanguageModelMiddleware`, so no other AI SDK package is imported.
 */
import type { LanguageModelMiddleware } from 'ai'
import type { ReplyMessage, ReplyPart, TurnMessage } from '../../session/turn.ts'

type WrapGenerate = NonNullable<LanguageModelMiddleware['wrapGenerate']>
type WrapStream = NonNullable<LanguageModelMiddleware['wrapStream']>
/** The options of one model call (one step of `generateText` / `streamText`). */
export type CallOptions = Parameters<WrapGenerate>[0]['params']
export type PromptMessage = CallOptions['prompt'][number]
export type GenerateResult = Awaited<ReturnType<WrapGenerate>>
export type StreamResult = Awaited<ReturnType<WrapStream>>
export type StreamPart = StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never
type ContentPart = GenerateResult['content'][number]
export type FinishReason = GenerateResult['finishReason']
export type CallWarning = GenerateResult['warnings'][number]

/** `turn.messages` as provider prompt messages (text in parts, tool calls and results as they are). */
export function toPromptMessages(messages: readonly TurnMessage[]): PromptMessage[] {
  return messages.map((message): PromptMessage => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content }
      case 'user':
        return { role: 'user', content: [{ type: 'text', text: message.content }] }
      case 'assistant':
        if (typeof message.content === 'string') return { role: 'assistant', content: [{ type: 'text', text: message.content }] }
        return { role: 'assistant', content: message.content.map((part) => ({ ...part })) }
      default:
        return { role: 'tool', content: message.content.map((part) => ({ ...part })) }
    }
  })
}

/** What a user message says, as text: its text parts, and a line for each file it carries. */
export function userTextOf(message: PromptMessage): string {
  if (typeof message.content === 'string') return message.content
  return message.content
    .map((part) => (part.type === 'text' ? part.text : part.type === 'file' ? `[file ${part.mediaType}${part.filename ? ` ${part.filename}` : ''}]` : ''))
    .filter((text) => text !== '')
    .join('\n')
}

function parseInput(input: string): unknown {
  try {
    return JSON.parse(input)
  } catch {
    // Kept as the model sent it: an unparseable input is still what happened.
    return input
  }
}

/**
 * One content part of the model's output as a reply part, as the AI SDK's own response messages
 * have it (`providerMetadata` becomes `providerOptions`); sources are not message content.
 */
function replyPartOf(part: ContentPart): ReplyPart | undefined {
  const options = part.providerMetadata ? { providerOptions: part.providerMetadata } : {}
  switch (part.type) {
    case 'source':
      return undefined
    case 'text':
      return part.text === '' && !part.providerMetadata ? undefined : { type: 'text', text: part.text, ...options }
    case 'reasoning':
      return { type: 'reasoning', text: part.text, ...options }
    case 'tool-call':
      return {
        type: 'tool-call',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: parseInput(part.input),
        ...(part.providerExecuted ? { providerExecuted: true } : {}),
        ...options,
      }
    case 'tool-result':
      return {
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        output: { type: part.isError ? 'error-json' : 'json', value: part.result },
        ...options,
      }
    default: {
      const { providerMetadata: _metadata, ...rest } = part
      return { ...rest, ...options }
    }
  }
}

/** The model's output of one step as the assistant message of a reply (none when it said nothing). */
export function assistantMessageOf(content: readonly ContentPart[]): ReplyMessage[] {
  const parts = content.map(replyPartOf).filter((part) => part !== undefined)
  return parts.length > 0 ? [{ role: 'assistant', content: parts }] : []
}

/** True when the output calls a tool the host runs: another step (or the host) has the results. */
export function callsHostTools(content: readonly ContentPart[]): boolean {
  return content.some((part) => part.type === 'tool-call' && part.providerExecuted !== true)
}

/** Collects a streamed step's parts into the content a generated step would have had. */
export interface StepCollector {
  add(part: StreamPart): void
  readonly content: ContentPart[]
  readonly finishReason: FinishReason | undefined
}

export function createStepCollector(): StepCollector {
  const content: ContentPart[] = []
  const open = new Map<string, { type: 'text' | 'reasoning'; text: string }>()
  let finishReason: FinishReason | undefined
  const block = (type: 'text' | 'reasoning', id: string, providerMetadata: ContentPart['providerMetadata']): { text: string } => {
    let part = open.get(`${type}:${id}`)
    if (!part) {
      part = { type, text: '', ...(providerMetadata ? { providerMetadata } : {}) }
      open.set(`${type}:${id}`, part)
      content.push(part as ContentPart)
    }
    return part
  }
  return {
    content,
    get finishReason() {
      return finishReason
    },
    add(part) {
      switch (part.type) {
        case 'text-start':
        case 'reasoning-start':
          block(part.type === 'text-start' ? 'text' : 'reasoning', part.id, part.providerMetadata)
          return
        case 'text-delta':
        case 'reasoning-delta':
          block(part.type === 'text-delta' ? 'text' : 'reasoning', part.id, part.providerMetadata).text += part.delta
          return
        case 'finish':
          finishReason = part.finishReason
          return
        case 'tool-call':
        case 'tool-result':
        case 'file':
        case 'reasoning-file':
        case 'custom':
        case 'tool-approval-request':
          content.push(part)
          return
      }
    },
  }
}
