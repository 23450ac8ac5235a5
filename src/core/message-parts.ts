/**
 * The structured parts of a message — text, reasoning, tool calls, tool results — as the context
 * store keeps them (decision 0019). A reply from a tool-using turn is stored twice over, on purpose:
 * its parts, losslessly, in the message's JSON `meta.parts`, and a plain-text rendering in `content`
 * that full-text search, summaries, token counts and `expand` read. No schema change: `meta` was
 * always there.
 *
 * The shapes follow the AI SDK's message parts (`ToolCallPart`, `ToolResultPart`, …) but are written
 * here structurally: core never imports `ai`.
 */
import { EngramError, ErrorCode } from './errors.ts'

/** A JSON value (the AI SDK's `JSONValue`, structurally). */
export type JsonValue = null | string | number | boolean | JsonObject | JsonValue[]
export interface JsonObject {
  [key: string]: JsonValue | undefined
}

/** Provider-specific options of a part (signatures, item ids), keyed by provider. */
export type PartProviderOptions = Record<string, JsonObject>

/** What a tool returned, as the AI SDK's `ToolResultOutput` has it. */
export type ToolOutput =
  | { type: 'text'; value: string; providerOptions?: PartProviderOptions }
  | { type: 'json'; value: JsonValue; providerOptions?: PartProviderOptions }
  | { type: 'error-text'; value: string; providerOptions?: PartProviderOptions }
  | { type: 'error-json'; value: JsonValue; providerOptions?: PartProviderOptions }
  | { type: 'execution-denied'; reason?: string; providerOptions?: PartProviderOptions }
  | { type: 'content'; value: JsonObject[]; providerOptions?: PartProviderOptions }

export interface TextPart {
  type: 'text'
  text: string
  providerOptions?: PartProviderOptions
}

export interface ReasoningPart {
  type: 'reasoning'
  text: string
  providerOptions?: PartProviderOptions
}

export interface ToolCallPart {
  type: 'tool-call'
  toolCallId: string
  toolName: string
  input: JsonValue
  providerExecuted?: boolean
  providerOptions?: PartProviderOptions
}

export interface ToolResultPart {
  type: 'tool-result'
  toolCallId: string
  toolName: string
  output: ToolOutput
  providerOptions?: PartProviderOptions
}

/** Any other part (a file, an approval request or response, a provider's custom part), kept as JSON. */
export interface OtherPart {
  type: string
  [key: string]: JsonValue | undefined
}

export type MessagePart = TextPart | ReasoningPart | ToolCallPart | ToolResultPart | OtherPart

const OUTPUT_TYPES = new Set(['text', 'json', 'error-text', 'error-json', 'execution-denied', 'content'])

export function isTextPart(part: MessagePart): part is TextPart {
  return part.type === 'text' && typeof part.text === 'string'
}
export function isToolCallPart(part: MessagePart): part is ToolCallPart {
  return part.type === 'tool-call'
}
export function isToolResultPart(part: MessagePart): part is ToolResultPart {
  return part.type === 'tool-result'
}

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

/**
 * A JSON copy of any value: bytes become base64 (what the AI SDK accepts as file data), a URL its
 * text, a Date its ISO form; `undefined` and functions are dropped as JSON drops them, a cycle is
 * cut. What is stored is what can be read back.
 */
export function toJsonValue(value: unknown, seen: Set<object> = new Set()): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value === 'bigint') return value.toString()
  if (typeof value !== 'object') return null
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')
  if (value instanceof ArrayBuffer) return Buffer.from(value).toString('base64')
  if (value instanceof URL) return value.href
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  if (seen.has(value)) return '[circular]'
  seen.add(value)
  try {
    if (Array.isArray(value)) return value.map((item) => (item === undefined || typeof item === 'function' ? null : toJsonValue(item, seen)))
    const out: JsonObject = {}
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue
      out[key] = toJsonValue(item, seen)
    }
    return out
  } finally {
    seen.delete(value)
  }
}

function requireString(part: Record<string, unknown>, key: string, where: string): string {
  const value = part[key]
  if (typeof value !== 'string') throw invalid(`${where}.${key} must be a string, got ${JSON.stringify(value) ?? typeof value}.`, `Pass the ${part.type} part as the AI SDK builds it ({ type: '${part.type}', ${key}, … }).`)
  return value
}

/**
 * Checks a message's content parts and copies them as JSON. The parts engram reads (text,
 * reasoning, tool-call, tool-result) must have their fields; any other part is kept as it is.
 * Throws `invalid_argument` naming the first bad part (`where` is its path, e.g. `reply[1].content`).
 */
export function normalizeParts(content: ReadonlyArray<unknown>, where: string): MessagePart[] {
  return content.map((raw, i) => {
    const at = `${where}[${i}]`
    if (typeof raw !== 'object' || raw === null || typeof (raw as { type?: unknown }).type !== 'string') {
      throw invalid(`${at} is not a message part.`, 'Pass parts as { type: "text", text } or the tool-call / tool-result parts the AI SDK returns.')
    }
    const part = raw as Record<string, unknown>
    switch (part.type) {
      case 'text':
      case 'reasoning':
        requireString(part, 'text', at)
        break
      case 'tool-call':
        requireString(part, 'toolCallId', at)
        requireString(part, 'toolName', at)
        break
      case 'tool-result': {
        requireString(part, 'toolCallId', at)
        requireString(part, 'toolName', at)
        const output = part.output as { type?: unknown } | undefined
        if (typeof output !== 'object' || output === null || !OUTPUT_TYPES.has(String(output.type))) {
          throw invalid(`${at}.output must be a tool output ({ type: 'text' | 'json' | 'error-text' | 'error-json' | 'execution-denied' | 'content', … }).`, 'Pass the tool-result part as the AI SDK builds it.')
        }
        break
      }
    }
    const copy = toJsonValue(part) as OtherPart
    if (part.type === 'tool-call' && copy.input === undefined) copy.input = null
    return copy as MessagePart
  })
}

/** True when the parts say more than their text: a plain-text rendering would lose something. */
export function hasStructure(parts: readonly MessagePart[]): boolean {
  return parts.some((part) => !isTextPart(part) || part.providerOptions !== undefined)
}

function json(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** A tool's output as text: what the model read, marked when it was an error or denied. */
export function renderToolOutput(output: ToolOutput): string {
  switch (output.type) {
    case 'text':
      return output.value
    case 'json':
      return json(output.value)
    case 'error-text':
      return `Error: ${output.value}`
    case 'error-json':
      return `Error: ${json(output.value)}`
    case 'execution-denied':
      return `(not run: denied${output.reason ? ` — ${output.reason}` : ''})`
    case 'content':
      return output.value.map((item) => (item.type === 'text' && typeof item.text === 'string' ? item.text : `[${String(item.type)}${typeof item.mediaType === 'string' ? ` ${item.mediaType}` : ''}]`)).join('\n')
  }
}

/** One part as a line of text (reasoning renders as nothing: it is kept, not shown; decision 0019). */
export function renderPart(part: MessagePart): string {
  if (isTextPart(part)) return part.text
  if (part.type === 'reasoning') return ''
  if (isToolCallPart(part)) return `[tool call ${part.toolName} ${part.toolCallId}] ${json(part.input)}`
  if (isToolResultPart(part)) return `[tool result ${part.toolName} ${part.toolCallId}] ${renderToolOutput(part.output)}`
  if (part.type === 'file' || part.type === 'reasoning-file') {
    return `[file${typeof part.mediaType === 'string' ? ` ${part.mediaType}` : ''}${typeof part.filename === 'string' ? ` ${part.filename}` : ''}]`
  }
  if (part.type === 'tool-approval-request') return `[approval requested for tool call ${String(part.toolCallId)}]`
  if (part.type === 'tool-approval-response') return `[approval ${part.approved === true ? 'granted' : 'denied'}${typeof part.reason === 'string' ? `: ${part.reason}` : ''}]`
  return `[${part.type}]`
}

/** The parts as the plain text stored in `content`: one line (or block) per part, empty ones left out. */
export function renderParts(parts: readonly MessagePart[]): string {
  return parts
    .map(renderPart)
    .filter((text) => text !== '')
    .join('\n')
}

/** What the speaker said in words: the text parts only (no tool calls, no reasoning). */
export function spokenText(parts: readonly MessagePart[]): string {
  return parts
    .filter(isTextPart)
    .map((part) => part.text)
    .join('')
}

/** The structured parts stored with a message, if it has any. */
export function partsOf(meta: Record<string, unknown> | undefined): MessagePart[] | undefined {
  const parts = meta?.parts
  if (!Array.isArray(parts)) return undefined
  // Written by engram; a row edited by hand that no longer reads as parts falls back to its text.
  if (!parts.every((part) => typeof part === 'object' && part !== null && typeof (part as { type?: unknown }).type === 'string')) return undefined
  return parts as MessagePart[]
}
