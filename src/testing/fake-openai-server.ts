/**
 * A fake OpenAI-compatible (and Anthropic-compatible) HTTP server on loopback, for testing LLM and
 * embedding paths through the real provider code — the AI SDK providers, our embedders, retries,
 * timeouts and error mapping — without a network or a model. Exported at `engram/test`.
 *
 * ```ts
 * const server = await startFakeOpenAiServer()
 * try {
 *   server.enqueue({ json: { summary: 'the user likes tea' } })        // next chat answer
 *   server.enqueue({ fail: { status: 503 } }, { text: 'hello' })        // then a 503, then text
 *   const llm = createLlm({ provider: 'openai-compatible', baseUrl: server.url, model: 'm', ... })
 *   // ... exercise the code under test ...
 *   assert.equal(server.requests[0]?.body.model, 'm')
 * } finally {
 *   await server.close()
 * }
 * ```
 *
 * Endpoints (all under `/v1`):
 * - `POST /v1/chat/completions` — OpenAI chat completions, non-streaming and streaming (SSE).
 * - `POST /v1/messages` — Anthropic messages (non-streaming).
 * - `POST /v1/embeddings` — OpenAI embeddings; deterministic vectors unless scripted.
 * - `GET /v1/models` — the configured model list.
 *
 * Chat answers come from the queue (`enqueue`, `script`), then from `onChat`, else a 500 that says
 * nothing was scripted. Embedding answers come from `enqueueEmbeddings`, then `onEmbed`, else
 * deterministic vectors. Every request is recorded in `requests`. With `apiKey` set, a request
 * that does not carry that key (`Authorization: Bearer …`, or Anthropic's `x-api-key`) gets the
 * provider's 401 before any script is consulted — a wrong key, as the real APIs answer it.
 */
import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** One scripted chat answer (used for both `/v1/chat/completions` and `/v1/messages`). */
export type FakeChatStep =
  /** The assistant answers with this value as JSON text (or as a forced tool call's arguments). */
  | { json: unknown }
  /** The assistant answers with this text. */
  | { text: string }
  /** An HTTP error with this status; `body` defaults to the API's usual error shape. */
  | { fail: { status: number; body?: unknown; headers?: Record<string, string> } }
  /** Never answers (until the client gives up or the server closes). */
  | { hang: true }
  /** The assistant answers with text that is not JSON. */
  | { invalidJson: true }
  /** A 200 response whose HTTP body is exactly this string (a malformed API response). */
  | { raw: string; contentType?: string }
  /**
   * The assistant calls these tools (after `text`, if given), streamed too. Ids default to
   * `call_<request>_<index>`.
   */
  | { toolCalls: FakeToolCall[]; text?: string }

/** A tool call the fake model makes. */
export interface FakeToolCall {
  name: string
  input: unknown
  id?: string
}

/** One scripted embeddings answer. */
export type FakeEmbeddingStep =
  /** These vectors, in input order (sent as given, not normalised). */
  | { vectors: number[][] }
  /** Deterministic hash vectors; `reverse` lists the items last-first (each keeps its `index`). */
  | { deterministic: true; reverse?: boolean }
  | { fail: { status: number; body?: unknown; headers?: Record<string, string> } }
  | { hang: true }
  | { raw: string; contentType?: string }

export interface FakeRequest {
  method: string
  /** The path without the query string, e.g. `/v1/chat/completions`. */
  path: string
  headers: Record<string, string | string[] | undefined>
  /** The parsed JSON body, the raw text when it is not JSON, or `undefined` when empty. */
  // biome-ignore lint/suspicious/noExplicitAny: arbitrary wire JSON that tests read field by field
  body: any
}

/** What a chat responder sees. */
export interface FakeChatRequest {
  api: 'openai-chat' | 'anthropic-messages'
  model: string | undefined
  /** The messages with their text content flattened (system prompts included, role `system`). */
  messages: { role: string; content: string }[]
  /** True when the client asked for JSON (response_format, a forced tool or output_config). */
  wantsJson: boolean
  body: JsonObject
}

export interface FakeEmbeddingRequest {
  model: string | undefined
  input: string[]
  dimensions: number | undefined
  body: JsonObject
}

export interface FakeOpenAiServerOptions {
  /** Chat responder used when the queue is empty. Default: a 500 saying nothing was scripted. */
  onChat?: (request: FakeChatRequest) => FakeChatStep | Promise<FakeChatStep>
  /** Embeddings responder used when the embeddings queue is empty. Default: deterministic vectors. */
  onEmbed?: (request: FakeEmbeddingRequest) => FakeEmbeddingStep | Promise<FakeEmbeddingStep>
  /** Dimensions of deterministic vectors when the request does not ask for some (default 32). */
  embeddingDimensions?: number
  /** Model ids listed by `GET /v1/models` (default `['fake-model', 'fake-embedding']`). */
  models?: string[]
  /** The one API key accepted; any other (or none) gets a 401 like the real API's. Default: no check. */
  apiKey?: string
}

export interface FakeOpenAiServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  readonly url: string
  readonly port: number
  /** Every request received, in order. */
  readonly requests: FakeRequest[]
  /** Append chat answers to the queue. */
  enqueue(...steps: FakeChatStep[]): void
  /** Replace the chat queue with these answers. */
  script(steps: FakeChatStep[]): void
  /** Append embeddings answers to their queue. */
  enqueueEmbeddings(...steps: FakeEmbeddingStep[]): void
  /** Chat answers still queued. */
  pendingChatSteps(): number
  /** Clear the queues and the recorded requests. */
  reset(): void
  /** Stop listening and drop every open connection (hung ones too). Safe to call twice. */
  close(): Promise<void>
}

/** A parsed JSON object from a request body. */
export type JsonObject = Record<string, unknown>

const CREATED = 1_700_000_000

/**
 * The deterministic vector the fake server returns for `text`: SHA-256 expanded to `dimensions`
 * values in [-1, 1], L2-normalised. Exported so tests can compare against it.
 */
export function fakeEmbeddingVector(text: string, dimensions: number): number[] {
  const values: number[] = []
  for (let block = 0; values.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}\u0000${text}`).digest()
    for (let offset = 0; offset + 4 <= digest.length && values.length < dimensions; offset += 4) {
      values.push(digest.readUInt32LE(offset) / 0x7fffffff - 1)
    }
  }
  const norm = Math.hypot(...values) || 1
  return values.map((value) => value / norm)
}

/** Start a fake server on 127.0.0.1 at a random free port. Always `close()` it (in `finally`/`after`). */
export async function startFakeOpenAiServer(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const chatQueue: FakeChatStep[] = []
  const embeddingQueue: FakeEmbeddingStep[] = []
  const requests: FakeRequest[] = []
  const sockets = new Set<Socket>()
  let counter = 0

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: `fake server crashed: ${String(error)}`, type: 'server_error' } })
      else response.destroy()
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(request)
    const path = (request.url ?? '/').split('?')[0] ?? '/'
    let body: unknown
    if (text !== '') {
      try {
        body = JSON.parse(text)
      } catch {
        body = text
      }
    }
    requests.push({ method: request.method ?? 'GET', path, headers: { ...request.headers }, body })
    counter++

    if (options.apiKey !== undefined && !carriesKey(request, options.apiKey)) {
      const message = 'Incorrect API key provided. You can find your API key in your account settings.'
      if (path === '/v1/messages') sendJson(response, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } })
      else sendJson(response, 401, { error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } })
      return
    }

    if (request.method === 'GET' && path === '/v1/models') {
      const models = options.models ?? ['fake-model', 'fake-embedding']
      sendJson(response, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'engram-fake' })) })
      return
    }
    if (request.method !== 'POST') {
      sendJson(response, 404, { error: { message: `fake server: no route ${request.method} ${path}`, type: 'invalid_request_error' } })
      return
    }
    if (typeof body !== 'object' || body === null) {
      sendJson(response, 400, { error: { message: 'fake server: request body must be a JSON object', type: 'invalid_request_error' } })
      return
    }
    const json = body as JsonObject
    if (path === '/v1/chat/completions') return answerOpenAiChat(json, response)
    if (path === '/v1/messages') return answerAnthropic(json, response)
    if (path === '/v1/embeddings') return answerEmbeddings(json, response)
    sendJson(response, 404, { error: { message: `fake server: no route POST ${path}`, type: 'invalid_request_error' } })
  }

  async function nextChatStep(request: FakeChatRequest): Promise<FakeChatStep> {
    const queued = chatQueue.shift()
    if (queued) return queued
    if (options.onChat) return options.onChat(request)
    return { fail: { status: 500, body: { error: { message: 'fake server: no scripted chat response (call server.enqueue(...) or pass onChat)', type: 'server_error' } } } }
  }

  async function answerOpenAiChat(body: JsonObject, response: ServerResponse): Promise<void> {
    const forcedTool = forcedOpenAiTool(body)
    const formatType = field(body.response_format, 'type')
    const chatRequest: FakeChatRequest = {
      api: 'openai-chat',
      model: typeof body.model === 'string' ? body.model : undefined,
      messages: flattenMessages(body.messages),
      wantsJson: formatType === 'json_object' || formatType === 'json_schema' || forcedTool !== undefined,
      body,
    }
    const step = await nextChatStep(chatRequest)
    if (handledCommonStep(step, response, openAiError)) return
    const id = `chatcmpl-fake-${counter}`
    const model = chatRequest.model ?? 'fake-model'
    let content: string | null = contentOf(step)
    let toolCalls: unknown[] | undefined
    if ('json' in step && forcedTool !== undefined) {
      toolCalls = [{ id: `call_${counter}`, type: 'function', function: { name: forcedTool, arguments: JSON.stringify(step.json) } }]
      content = null
    }
    if ('toolCalls' in step) {
      toolCalls = step.toolCalls.map((call, index) => ({ id: call.id ?? `call_${counter}_${index}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.input) } }))
      content = step.text ?? null
    }
    const finishReason = toolCalls ? 'tool_calls' : 'stop'
    const usage = { prompt_tokens: countTokens(chatRequest.messages.map((message) => message.content).join(' ')), completion_tokens: countTokens(content ?? ''), total_tokens: 0 }
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens

    if (body.stream === true) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      const chunk = (delta: unknown, finish: string | null) => ({ id, object: 'chat.completion.chunk', created: CREATED, model, choices: [{ index: 0, delta, finish_reason: finish }] })
      const events: unknown[] = [chunk({ role: 'assistant', content: '' }, null)]
      for (const piece of splitForStreaming(content ?? '')) events.push(chunk({ content: piece }, null))
      if (toolCalls) events.push(chunk({ tool_calls: toolCalls.map((call, index) => ({ index, ...(call as object) })) }, null))
      events.push(chunk({}, finishReason))
      if (field(body.stream_options, 'include_usage') === true) events.push({ id, object: 'chat.completion.chunk', created: CREATED, model, choices: [], usage })
      for (const event of events) response.write(`data: ${JSON.stringify(event)}\n\n`)
      response.end('data: [DONE]\n\n')
      return
    }
    sendJson(response, 200, {
      id,
      object: 'chat.completion',
      created: CREATED,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content, ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: finishReason, logprobs: null }],
      usage,
    })
  }

  async function answerAnthropic(body: JsonObject, response: ServerResponse): Promise<void> {
    const tools = Array.isArray(body.tools) ? body.tools : []
    const choiceType = field(body.tool_choice, 'type')
    const named = choiceType === 'tool' ? field(body.tool_choice, 'name') : tools.length === 1 && choiceType === 'any' ? field(tools[0], 'name') : undefined
    const forcedTool = typeof named === 'string' ? named : undefined
    const systemText = textOf(body.system)
    const chatRequest: FakeChatRequest = {
      api: 'anthropic-messages',
      model: typeof body.model === 'string' ? body.model : undefined,
      messages: [...(systemText ? [{ role: 'system', content: systemText }] : []), ...flattenMessages(body.messages)],
      wantsJson: forcedTool !== undefined || field(body.output_config, 'format') !== undefined || body.output_format !== undefined,
      body,
    }
    if (body.stream === true) {
      sendJson(response, 400, anthropicError(400, 'fake server: streaming /v1/messages is not supported'))
      return
    }
    const step = await nextChatStep(chatRequest)
    if (handledCommonStep(step, response, anthropicError)) return
    const text = contentOf(step)
    const content: unknown[] =
      'json' in step && forcedTool !== undefined
        ? [{ type: 'tool_use', id: `toolu_fake_${counter}`, name: forcedTool, input: step.json }]
        : 'toolCalls' in step
          ? [...(text ? [{ type: 'text', text }] : []), ...step.toolCalls.map((call, index) => ({ type: 'tool_use', id: call.id ?? `toolu_fake_${counter}_${index}`, name: call.name, input: call.input }))]
          : [{ type: 'text', text }]
    sendJson(response, 200, {
      id: `msg_fake_${counter}`,
      type: 'message',
      role: 'assistant',
      model: chatRequest.model ?? 'fake-model',
      content,
      stop_reason: content.some((part) => field(part, 'type') === 'tool_use') ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: countTokens(chatRequest.messages.map((message) => message.content).join(' ')), output_tokens: countTokens(text) },
    })
  }

  async function answerEmbeddings(body: JsonObject, response: ServerResponse): Promise<void> {
    const input: string[] = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input.map(String) : []
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : undefined
    const embeddingRequest: FakeEmbeddingRequest = { model: typeof body.model === 'string' ? body.model : undefined, input, dimensions, body }
    const step: FakeEmbeddingStep = embeddingQueue.shift() ?? (options.onEmbed ? await options.onEmbed(embeddingRequest) : { deterministic: true })
    if (handledCommonStep(step, response, openAiError)) return
    let data: { object: 'embedding'; index: number; embedding: number[] }[]
    if ('vectors' in step) {
      data = step.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }))
    } else {
      const dims = dimensions ?? options.embeddingDimensions ?? 32
      data = input.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbeddingVector(text, dims) }))
      if ('reverse' in step && step.reverse) data.reverse()
    }
    const tokens = countTokens(input.join(' '))
    sendJson(response, 200, { object: 'list', data, model: embeddingRequest.model ?? 'fake-embedding', usage: { prompt_tokens: tokens, total_tokens: tokens } })
  }

  /** Answers fail / hang / raw steps the same way on every endpoint; true when it did. */
  function handledCommonStep(step: FakeChatStep | FakeEmbeddingStep, response: ServerResponse, errorBody: (status: number, message: string) => unknown): boolean {
    if ('hang' in step) return true // the socket stays open until the client aborts or close() drops it
    if ('fail' in step) {
      const { status, body, headers } = step.fail
      sendJson(response, status, body ?? errorBody(status, `fake server error (${status})`), headers)
      return true
    }
    if ('raw' in step) {
      response.writeHead(200, { 'content-type': step.contentType ?? 'application/json' })
      response.end(step.raw)
      return true
    }
    return false
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('fake server: no TCP address')
  const port = address.port
  let closing: Promise<void> | undefined

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    enqueue: (...steps) => {
      chatQueue.push(...steps)
    },
    script: (steps) => {
      chatQueue.splice(0, chatQueue.length, ...steps)
    },
    enqueueEmbeddings: (...steps) => {
      embeddingQueue.push(...steps)
    },
    pendingChatSteps: () => chatQueue.length,
    reset: () => {
      chatQueue.length = 0
      embeddingQueue.length = 0
      requests.length = 0
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Hung requests and keep-alive connections would hold close() (and the process) open.
        server.closeAllConnections()
        for (const socket of sockets) socket.destroy()
      })
      return closing
    },
  }
}

/** Whether a request carries `key` the way OpenAI (`Authorization: Bearer`) or Anthropic (`x-api-key`) clients send it. */
function carriesKey(request: IncomingMessage, key: string): boolean {
  return request.headers.authorization === `Bearer ${key}` || request.headers['x-api-key'] === key
}

function openAiError(status: number, message: string): unknown {
  return { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null } }
}

function anthropicError(status: number, message: string): unknown {
  return { type: 'error', error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', message } }
}

function contentOf(step: FakeChatStep): string {
  if ('json' in step) return JSON.stringify(step.json)
  if ('toolCalls' in step) return step.text ?? ''
  if ('text' in step) return step.text
  if ('invalidJson' in step) return 'Sure! Here is what you asked for: {summary: the user likes tea,'
  return ''
}

/** The name of the function tool the request forces, if any (how some SDK paths ask for JSON). */
function forcedOpenAiTool(body: JsonObject): string | undefined {
  const choice = body.tool_choice
  const tools = Array.isArray(body.tools) ? body.tools : []
  const name = choice === 'required' && tools.length === 1 ? field(field(tools[0], 'function'), 'name') : field(field(choice, 'function'), 'name')
  return typeof name === 'string' ? name : undefined
}

/** `value[key]` when value is an object, else undefined. */
function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as JsonObject)[key] : undefined
}

/** Text of a message content: a string, or the text parts of a part list. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((part) => {
    const text = field(part, 'text')
    return typeof text === 'string' ? text : ''
  }).join('')
}

function flattenMessages(messages: unknown): { role: string; content: string }[] {
  if (!Array.isArray(messages)) return []
  return messages.map((message) => ({ role: String(field(message, 'role') ?? ''), content: textOf(field(message, 'content')) }))
}

function splitForStreaming(text: string): string[] {
  const pieces: string[] = []
  for (let start = 0; start < text.length; start += 16) pieces.push(text.slice(start, start + 16))
  return pieces
}

function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers })
  response.end(payload)
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}
