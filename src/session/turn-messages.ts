/**
 * The assembled conversation as `turn.messages` (decision 0019): stored tool calls and results come
 * back as the parts they were stored as, so the next model call sees the same tool use — but only
 * where a provider accepts them. A provider refuses a tool call without its result right after it,
 * and a result without its call right before it; compaction (a call folded into a summary), the
 * budget (a window that starts between the two) or a turn that never recorded its results can leave
 * either alone. Such a part is given as its text rendering instead: an assistant's lone call stays in
 * the assistant's message as text, a lone result becomes a `user` message of text (as summaries are).
 * Reasoning is kept in the store but not replayed (providers ignore or reject the reasoning of past
 * turns).
 */
import {
  isTextPart,
  isToolCallPart,
  isToolResultPart,
  type MessagePart,
  renderPart,
  renderParts,
  type ToolCallPart,
  type ToolOutput,
  type ToolResultPart,
} from '../core/message-parts.ts'
import type { AssembledItem } from '../memory/context/provider.ts'
import type { TurnMessage, TurnTextPart, TurnToolCallPart, TurnToolOutput, TurnToolResultPart } from './turn.ts'

/** The assembled items as model messages, each tool call paired with its result or given as text. */
export function toTurnMessages(items: readonly AssembledItem[]): TurnMessage[] {
  // For each assistant message with tool calls: the ids whose results follow it in the run of tool
  // messages right after it. Ids are matched by position, never globally: providers reuse them.
  const pairedAt = new Map<number, Set<string>>()
  const resultsOwner = new Map<number, number>()
  items.forEach((item, i) => {
    if (item.kind !== 'message' || item.role !== 'assistant' || !item.parts) return
    const calls = new Set(item.parts.filter(isClientCall).map((part) => part.toolCallId))
    if (calls.size === 0) return
    const answered = new Set<string>()
    for (let j = i + 1; j < items.length && isToolMessage(items[j]!); j++) {
      resultsOwner.set(j, i)
      for (const part of items[j]!.parts ?? []) if (isToolResultPart(part) && calls.has(part.toolCallId)) answered.add(part.toolCallId)
    }
    pairedAt.set(i, answered)
  })

  const out: TurnMessage[] = []
  // Lone results wait until the run of tool messages ends: nothing may come between a call's
  // assistant message and its results.
  let lone: string[] = []
  items.forEach((item, i) => {
    if (lone.length > 0 && !(item.kind === 'message' && item.role === 'tool')) {
      out.push({ role: 'user', content: lone.join('\n') })
      lone = []
    }
    if (item.kind === 'summary') {
      out.push({ role: 'user', content: item.content })
      return
    }
    const name = item.name !== undefined ? { name: item.name } : {}
    switch (item.role) {
      case 'system':
        out.push({ role: 'system', content: item.content })
        return
      case 'user':
        out.push({ role: 'user', content: item.content, ...name })
        return
      case 'assistant': {
        if (!item.parts) {
          out.push({ role: 'assistant', content: item.content, ...name })
          return
        }
        const paired = pairedAt.get(i) ?? new Set<string>()
        const content: Array<TurnTextPart | TurnToolCallPart> = []
        for (const part of item.parts) {
          if (isTextPart(part)) content.push({ type: 'text', text: part.text, ...(part.providerOptions ? { providerOptions: part.providerOptions } : {}) })
          else if (isClientCall(part) && paired.has(part.toolCallId)) {
            content.push({
              type: 'tool-call',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              input: part.input,
              ...(part.providerOptions ? { providerOptions: part.providerOptions } : {}),
            })
          } else {
            const text = renderPart(part)
            if (text !== '') content.push({ type: 'text', text })
          }
        }
        if (content.every((part) => part.type === 'text' && part.providerOptions === undefined)) {
          out.push({ role: 'assistant', content: content.map((part) => (part as TurnTextPart).text).join('\n'), ...name })
        } else {
          out.push({ role: 'assistant', content, ...name })
        }
        return
      }
      case 'tool': {
        const owner = resultsOwner.get(i)
        const paired = owner === undefined ? new Set<string>() : (pairedAt.get(owner) ?? new Set<string>())
        const kept: TurnToolResultPart[] = []
        const alone: MessagePart[] = []
        for (const part of item.parts ?? []) {
          if (isToolResultPart(part) && paired.has(part.toolCallId)) kept.push(turnResult(part))
          else alone.push(part)
        }
        if (kept.length > 0) out.push({ role: 'tool', content: kept })
        const text = item.parts ? renderParts(alone) : `[tool result${item.name ? ` ${item.name}` : ''}] ${item.content}`
        if (text !== '') lone.push(text)
        return
      }
    }
  })
  if (lone.length > 0) out.push({ role: 'user', content: lone.join('\n') })
  return out
}

function isToolMessage(item: AssembledItem): boolean {
  return item.kind === 'message' && item.role === 'tool' && item.parts !== undefined
}

/** A call the host ran (a provider-executed call carries its own result and is given as text). */
function isClientCall(part: MessagePart): part is ToolCallPart {
  return isToolCallPart(part) && part.providerExecuted !== true
}

function turnResult(part: ToolResultPart): TurnToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: part.toolCallId,
    toolName: part.toolName,
    output: turnOutput(part.output),
    ...(part.providerOptions ? { providerOptions: part.providerOptions } : {}),
  }
}

function turnOutput(output: ToolOutput): TurnToolOutput {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return { type: output.type, value: output.value }
    case 'json':
    case 'error-json':
      return { type: output.type, value: output.value }
    case 'execution-denied':
      return output.reason !== undefined ? { type: 'execution-denied', reason: output.reason } : { type: 'execution-denied' }
    case 'content':
      // Files in a tool's output are kept in the store; the model reads them again as their description.
      return {
        type: 'content',
        value: output.value.map((item) =>
          item.type === 'text' && typeof item.text === 'string'
            ? { type: 'text', text: item.text }
            : { type: 'text', text: `[${String(item.type)}${typeof item.mediaType === 'string' ? ` ${item.mediaType}` : ''}]` },
        ),
      }
  }
}
