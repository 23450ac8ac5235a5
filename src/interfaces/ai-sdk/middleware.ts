/**
 * engram as an AI SDK language model middleware (decision 0019): the one-line integration.
 *
 *   const memory = engramMiddleware({ mind, sessionId: 'chat-42', user: 'ada' })
 *   const model = wrapLanguageModel({ model: openai('gpt-5'), middleware: memory })
 *   const { text } = await generateText({ model, tools: memory.tools, prompt: 'What did we decide?' })
 *
 * A model call whose prompt ends with a user message begins a turn (`session.begin`: the message
 * is stored, memory primed, the conversation assembled); the steps of a tool loop that follow it
 * (their prompts end with tool results) reuse that turn, so a message is primed once, not once per
 * step. The step that answers without calling a tool ends the turn (`session.end`) with everything
 * the loop produced — tool calls, their results, the answer — streamed or not.
 */
import type { JSONValue, LanguageModelMiddleware, ToolSet } from 'ai'
import type { Mind } from '../../mind.ts'
import type { Session, SessionOptions } from '../../session/session.ts'
import type { ReplyMessage, Turn, TurnEnd } from '../../session/turn.ts'
import {
  assistantMessageOf,
  type CallOptions,
  type CallWarning,
  callsHostTools,
  type GenerateResult,
  createStepCollector,
  type PromptMessage,
  type StepCollector,
  type StreamPart,
  toPromptMessages,
  userTextOf,
} from './model-messages.ts'
import { toAiSdkTools } from '../../tools/ai-sdk-tools.ts'

export interface EngramMiddlewareOptions extends SessionOptions {
  mind: Mind
  /** The conversation: messages are stored, and the context assembled, per session id. */
  sessionId: string
  /**
   * Where the conversation the model sees comes from. `engram` (default): from engram's store,
   * within its budget, older turns as summaries — the host may send only the new message. `host`:
   * the host's messages as sent; engram adds its memory to the system prompt and records the turn.
   */
  history?: 'engram' | 'host'
}

type SharedProviderMetadata = NonNullable<GenerateResult['providerMetadata']>

/** A language model middleware that is also where the session's tools come from. */
export interface EngramMiddleware extends LanguageModelMiddleware {
  /**
   * engram's memory tools (and the agent's own, from `tools`) as AI SDK tools. They run through
   * the session, where the error learner and the pattern monitor watch them; the model sees their
   * descriptions with this turn's tool wisdom.
   */
  readonly tools: ToolSet
  /**
   * Records the turn still open, if any: one whose last step called tools and had no step after it
   * (`stopWhen` ended the loop, or the host runs the tools). The next user message of the session
   * records it too; call this before a short-lived process exits.
   */
  flush(): Promise<TurnEnd | undefined>
}

/** A turn between its first model call and `session.end`. */
interface OpenTurn {
  session: Session
  turn: Turn
  /** The user's message as the prompt had it (to tell a retry of the same call from a new message). */
  message: string
  /** Model calls that completed in this turn. */
  steps: number
  /** The reply so far: the loop's messages before the last step, and the last step's output. */
  reply: ReplyMessage[]
  /** A step being streamed: the messages before it and what has arrived (kept if the stream breaks). */
  streaming?: { before: ReplyMessage[]; collector: StepCollector }
  /** Results of this turn's tool calls that ran through `tools`, by call id. */
  results: Map<string, { toolName: string; output: unknown }>
  journal?: { write(text: string): void }
}

/**
 * Open turns by mind and session id, so that the steps of one turn reach it through any middleware
 * instance of this process (a host that creates one per request). A turn in flight is the one thing
 * held in memory; everything it stands for is stored by `begin` and `end`.
 */
const openTurns = new WeakMap<Mind, Map<string, OpenTurn>>()

/**
 * The middleware for one conversation. Create one per conversation or per request: it is cheap, and
 * the turn of a tool loop is found again by session id.
 */
export function engramMiddleware(options: EngramMiddlewareOptions): EngramMiddleware {
  const { mind, sessionId, history = 'engram', ...sessionOptions } = options
  let session: Session | undefined
  const sessionOf = (): Session => (session ??= mind.session(sessionId, sessionOptions))
  const open = openTurns.get(mind) ?? new Map<string, OpenTurn>()
  openTurns.set(mind, open)

  async function end(turn: OpenTurn): Promise<TurnEnd> {
    if (open.get(sessionId) === turn) open.delete(sessionId)
    const reply = turn.streaming ? [...turn.streaming.before, ...assistantMessageOf(turn.streaming.collector.content)] : turn.reply
    return turn.session.end(turn.turn, withResults(reply, turn.results))
  }

  /** The turn this call belongs to (begun now when its prompt ends with a new user message). */
  async function turnFor(prompt: readonly PromptMessage[]): Promise<OpenTurn | undefined> {
    const last = prompt.at(-1)
    const current = open.get(sessionId)
    if (last?.role !== 'user') return current
    const message = userTextOf(last)
    // The same call again (the AI SDK retries a failed call): the message is stored already.
    if (current && current.steps === 0 && current.message === message) return current
    if (current) await end(current)
    const own = sessionOf()
    const turn: OpenTurn = { session: own, turn: await own.begin(message), message, steps: 0, reply: [], results: new Map() }
    open.set(sessionId, turn)
    return turn
  }

  /** The call with engram's system prompt, conversation and tool descriptions. */
  function primedCall(params: CallOptions, turn: Turn): CallOptions {
    const prompt = params.prompt
    const lastUser = prompt.findLastIndex((message) => message.role === 'user')
    const hostSystem = prompt.filter((message) => message.role === 'system').map((message) => message.content)
    let conversation: PromptMessage[]
    if (history === 'host') {
      conversation = prompt.slice(0, Math.max(0, lastUser)).filter((message) => message.role !== 'system')
    } else {
      // turn.messages ends with the user's message as stored; the host's own copy (files and all) is sent instead.
      const stored = turn.messages.at(-1)
      const hostHasIt = lastUser !== -1 && stored?.role === 'user' && stored.content === turn.message
      conversation = toPromptMessages(hostHasIt ? turn.messages.slice(0, -1) : turn.messages)
    }
    const system = [turn.system, ...hostSystem].filter((text) => text.trim() !== '').join('\n\n')
    const descriptions = new Map(turn.tools.map((tool) => [tool.name, tool.description]))
    return {
      ...params,
      prompt: [
        { role: 'system', content: system },
        ...conversation,
        ...prompt.slice(Math.max(0, lastUser)).filter((message) => message.role !== 'system'),
      ],
      ...(params.tools
        ? { tools: params.tools.map((tool) => (tool.type === 'function' && descriptions.has(tool.name) ? { ...tool, description: descriptions.get(tool.name) } : tool)) }
        : {}),
    }
  }

  /** A step finished: the turn ends unless the model called tools that the host will run. */
  async function stepDone(turn: OpenTurn, before: ReplyMessage[], output: ReplyMessage[], callsTools: boolean): Promise<TurnEnd | undefined> {
    turn.steps++
    turn.reply = [...before, ...output]
    turn.streaming = undefined
    return callsTools ? undefined : end(turn)
  }

  // Names, descriptions and schemas as the session has them; every call runs through the session.
  const definitions = [...(sessionOptions.tools ?? []), ...mind.agentTools({ sessionId, ...(options.user !== undefined ? { user: options.user } : {}) })]
  const viaSession = definitions.map((tool) => ({ ...tool, execute: (input: unknown) => sessionOf().execute(tool.name, input) }))
  const tools = recordingTools(toAiSdkTools(viaSession), (toolCallId, toolName, output) => {
    open.get(sessionId)?.results.set(toolCallId, { toolName, output })
  })

  return {
    specificationVersion: 'v4',
    tools,
    async flush() {
      const turn = open.get(sessionId)
      return turn ? end(turn) : undefined
    },

    async wrapGenerate({ params, model }) {
      const turn = await turnFor(params.prompt)
      // A tool step with no turn in this process (it began elsewhere): passed through, not recorded.
      if (!turn) return model.doGenerate(params)
      const call = primedCall(params, turn.turn)
      const result = await model.doGenerate(call)
      const first = turn.steps === 0
      const ended = await stepDone(turn, loopMessages(call.prompt), assistantMessageOf(result.content), result.finishReason.unified === 'tool-calls' && callsHostTools(result.content))
      const answered = ended ? { ...result, providerMetadata: withConfirmations(result.providerMetadata, ended) } : result
      return first ? { ...answered, warnings: [...answered.warnings, ...warningsOf(turn.turn)] } : answered
    },

    async wrapStream({ params, model }) {
      const turn = await turnFor(params.prompt)
      if (!turn) return model.doStream(params)
      const first = turn.steps === 0
      const call = primedCall(params, turn.turn)
      const before = loopMessages(call.prompt)
      const collector = createStepCollector()
      turn.streaming = { before, collector }
      turn.journal ??= turn.session.stream(turn.turn)
      const journal = turn.journal
      const { stream, ...rest } = await model.doStream(call)
      // The finish part waits for the turn's end: it carries the confirmations the answer leaves waiting.
      let finish: Extract<StreamPart, { type: 'finish' }> | undefined
      const recorded = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          collector.add(part)
          if (part.type === 'text-delta') journal.write(part.delta)
          if (part.type === 'finish') finish = part
          else controller.enqueue(first && part.type === 'stream-start' ? { ...part, warnings: [...part.warnings, ...warningsOf(turn.turn)] } : part)
        },
        async flush(controller) {
          // The stream is complete: record it (a broken stream stays open; flush() or the next message records what arrived).
          const ended = await stepDone(turn, before, assistantMessageOf(collector.content), collector.finishReason?.unified === 'tool-calls' && callsHostTools(collector.content))
          if (finish) controller.enqueue(ended ? { ...finish, providerMetadata: withConfirmations(finish.providerMetadata, ended) } : finish)
        },
      })
      return { ...rest, stream: stream.pipeThrough(recorded) }
    },
  }
}

/** The messages of this turn's tool loop so far: what the prompt has after the user's message. */
function loopMessages(prompt: readonly PromptMessage[]): ReplyMessage[] {
  const lastUser = prompt.findLastIndex((message) => message.role === 'user')
  return prompt.slice(lastUser + 1).filter((message): message is PromptMessage & ReplyMessage => message.role === 'assistant' || message.role === 'tool')
}

/**
 * The answer's provider metadata with `engram.confirmations`: the memories waiting for the user's
 * yes or no after this answer (copilot mode; empty otherwise), where an AI SDK host reads the
 * answer's extras (`result.providerMetadata.engram`, the stream's finish part).
 */
function withConfirmations(metadata: SharedProviderMetadata | undefined, ended: TurnEnd): SharedProviderMetadata {
  // JSON as the wire carries it: engrams are plain data, with no undefined fields left in.
  const confirmations = JSON.parse(JSON.stringify(ended.confirmations)) as JSONValue
  return { ...metadata, engram: { ...metadata?.engram, confirmations } }
}

/** A turn's degradations as AI SDK call warnings, so the host sees them in `result.warnings`. */
function warningsOf(turn: Turn): CallWarning[] {
  return turn.warnings.map((message) => ({ type: 'other', message: `engram: ${message}` }))
}

/** The reply with the results of calls it lacks that ran through the middleware's tools. */
function withResults(reply: ReplyMessage[], results: Map<string, { toolName: string; output: unknown }>): ReplyMessage[] {
  const answered = new Set<string>()
  const asked: string[] = []
  for (const message of reply) {
    if (typeof message.content === 'string') continue
    for (const part of message.content as ReadonlyArray<{ type: string; toolCallId?: string; providerExecuted?: boolean }>) {
      if (part.type === 'tool-result' && part.toolCallId) answered.add(part.toolCallId)
      if (part.type === 'tool-call' && part.toolCallId && part.providerExecuted !== true) asked.push(part.toolCallId)
    }
  }
  const missing = asked.filter((id) => !answered.has(id) && results.has(id))
  if (missing.length === 0) return reply
  const content = missing.map((id) => {
    const { toolName, output } = results.get(id)!
    return { type: 'tool-result', toolCallId: id, toolName, output: typeof output === 'string' ? { type: 'text', value: output } : { type: 'json', value: output ?? null } }
  })
  return [...reply, { role: 'tool', content }]
}

/** The tools, each reporting its result (by the AI SDK's tool call id) after it ran. */
function recordingTools(tools: ToolSet, onResult: (toolCallId: string, toolName: string, output: unknown) => void): ToolSet {
  const out: ToolSet = {}
  for (const [name, definition] of Object.entries(tools)) {
    const execute = definition.execute
    out[name] = execute
      ? {
          ...definition,
          execute: async (input: unknown, callOptions: Parameters<typeof execute>[1]) => {
            const output = await execute(input, callOptions)
            onResult(callOptions.toolCallId, name, output)
            return output
          },
        }
      : definition
  }
  return out
}
