/**
 * The HTTP API of `engram serve` (issue 17, decision 0038) as a Hono app over one open mind — no
 * socket here: `engram serve` listens, tests call `app.request()`.
 *
 *   POST /v1/turns/begin   { session, message, user?, at? }      → the turn (system, messages, provenance, …)
 *   POST /v1/turns/end     { session, turn, reply, user? }        → stored reply ids, scheduled work
 *   POST /v1/memorize      { entries, user? }                     → the encode report (memorize's schema)
 *   GET|POST /v1/search    { query, kinds?, limit?, user? }       → ranked hits (search_memory's schema)
 *   GET  /v1/status                                               → the mind's status (agent or administrator)
 *   GET  /v1/health                                               → { ok: true } without credentials
 *
 * Every answer is `{ ok: true, … }` or `{ ok: false, error: { code, message, fix } }`, the code one
 * of `ErrorCode` (or `internal`), the HTTP status from the code.
 */
import { Hono } from 'hono'
import type { Context } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { z } from 'zod'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Mind } from '../../mind.ts'
import type { TurnRef } from '../../session/session.ts'
import type { Turn } from '../../session/turn.ts'
import { memorizeInputSchema } from '../../tools/memorize-tool.ts'
import { SEARCH_MEMORY_TOOL_NAME } from '../../tools/search-memory-tool.ts'
import type { EngramTool, ToolResult } from '../../tools/tool.ts'
import { ENGRAM_VERSION } from '../cli/version.ts'
import { type Credentials, isLoopback, parseCredentials, type Principal } from './credentials.ts'

/** Default bound of a request body: far above any turn a person types, far below what hurts. */
export const DEFAULT_MAX_BODY_BYTES = 1_000_000

export interface ServeAppOptions {
  mind: Mind
  /** Who may call (`parseCredentials(serve.tokens)`); default: the mind's `serve.tokens`. */
  credentials?: Credentials
  /** Largest request body in bytes (default 1 MB); larger ones get 413. */
  maxBodyBytes?: number
}

type Env = { Variables: { principal: Principal } }

const STATUS_OF: Record<string, ContentfulStatusCode> = {
  [ErrorCode.invalidArgument]: 400,
  [ErrorCode.pathOutsideMemory]: 400,
  [ErrorCode.unauthorized]: 401,
  [ErrorCode.accessDenied]: 403,
  [ErrorCode.notFound]: 404,
  [ErrorCode.limitExceeded]: 413,
  [ErrorCode.unsupported]: 501,
  [ErrorCode.llmNotConfigured]: 501,
  [ErrorCode.llmCallFailed]: 502,
  [ErrorCode.llmInvalidOutput]: 502,
  [ErrorCode.embedFailed]: 502,
  [ErrorCode.lockBusy]: 503,
  [ErrorCode.storageUnavailable]: 503,
  [ErrorCode.llmTimeout]: 504,
}

/** The HTTP status of an error code (500 for the ones that are the server's problem). */
export function httpStatusOf(code: string): ContentfulStatusCode {
  return STATUS_OF[code] ?? 500
}

function failure(c: Context, code: string, message: string, fix: string, extra: Record<string, string> = {}): Response {
  for (const [name, value] of Object.entries(extra)) c.header(name, value)
  return c.json({ ok: false, error: { code, message, fix } }, httpStatusOf(code))
}

function userError(code: string, message: string, fix: string, details?: Record<string, unknown>): EngramError {
  return new EngramError({ code, category: 'user', message, fix, ...(details ? { details } : {}) })
}

/** Zod issues as one readable message, as the tools word them. */
function issuesMessage(what: string, issues: readonly z.core.$ZodIssue[]): string {
  return [`${what} is not valid:`, ...issues.map((issue) => `- ${issue.path.join('.') || 'body'}: ${issue.message}`)].join('\n')
}

function parseWith<T>(schema: z.ZodType<T>, input: unknown, what: string, fix: string): T {
  const parsed = schema.safeParse(input)
  if (!parsed.success) throw userError(ErrorCode.invalidArgument, issuesMessage(what, parsed.error.issues), fix)
  return parsed.data
}

const userField = z.string().trim().min(1).max(200).optional()
const sessionField = z.string().trim().min(1).max(200)

const beginSchema = z.object({
  session: sessionField,
  message: z.string(),
  user: userField,
  at: z.iso.datetime({ offset: true }).optional(),
})
const BEGIN_FIX = 'send {"session": "s1", "message": "the user\'s message", "user": "optional, only with an administrator\'s token"}'

const endSchema = z.object({
  session: sessionField,
  turn: z.number().int().min(1),
  reply: z.union([z.string(), z.array(z.unknown())]),
  user: userField,
})
const END_FIX = 'send {"session": "s1", "turn": <number from /v1/turns/begin>, "reply": "the agent\'s reply, or the turn\'s messages"}'

const memorizeBodySchema = memorizeInputSchema.extend({ user: userField })
const MEMORIZE_FIX = 'send {"entries": [{"text": "…", "kind": "lesson|rule|profile|fact…"}]}, as the memorize tool takes them'

const SEARCH_FIX = 'send {"query": "a few distinctive words", "kinds": ["lesson", …] (optional), "limit": 10 (optional)}, or GET /v1/search?query=…&kinds=lesson,rule&limit=10'

/**
 * The user a request acts for: the credential's own, unless an administrator names another. A
 * credential for one user (or the agent alone) naming someone else is refused.
 */
function actingUser(principal: Principal, requested: string | undefined): string | undefined {
  if (requested === undefined || requested === principal.user) return principal.user
  if (principal.admin) return requested
  throw userError(
    ErrorCode.accessDenied,
    `This credential acts for ${principal.user === undefined ? 'the agent alone (no user)' : `user ${JSON.stringify(principal.user)}`} and cannot act for ${JSON.stringify(requested)}.`,
    "leave \"user\" out (the credential's own user is used), or use that user's token or an administrator's",
    { requested },
  )
}

function toolNamed(tools: EngramTool[], name: string): EngramTool {
  const tool = tools.find((candidate) => candidate.name === name)
  if (!tool) throw new Error(`agent tool ${name} is missing`)
  return tool
}

/** A tool's error result as an EngramError (its text is "message\nFix: fix"). */
function toolFailure(result: ToolResult): EngramError {
  const data = result.data as { code?: unknown } | undefined
  const code = typeof data?.code === 'string' && data.code !== 'internal' ? data.code : ErrorCode.invalidArgument
  const at = result.text.lastIndexOf('\nFix: ')
  const message = at < 0 ? result.text : result.text.slice(0, at)
  const fix = at < 0 ? 'correct the request and send it again' : result.text.slice(at + 6)
  return userError(code, message, fix, data && typeof data === 'object' ? { result: data } : undefined)
}

async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  let body: unknown
  try {
    body = await c.req.json()
  } catch {
    throw userError(ErrorCode.invalidArgument, 'The request body is not valid JSON.', 'send a JSON object with Content-Type: application/json')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw userError(ErrorCode.invalidArgument, 'The request body must be a JSON object.', 'send a JSON object, e.g. {"query": "…"}')
  return body as Record<string, unknown>
}

/** A turn as JSON: its tools by name, description and input schema (their functions stay here). */
function turnJson(turn: Turn): Record<string, unknown> {
  const { tools, ...rest } = turn
  return { ...rest, tools: tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.jsonSchema })) }
}

/** The Hono app of `engram serve` over `mind`. The caller owns the mind and closes it. */
export function createServeApp(options: ServeAppOptions): Hono<Env> {
  const { mind } = options
  const credentials = options.credentials ?? parseCredentials(mind.config.values.serve.tokens)
  const app = new Hono<Env>()

  app.onError((error, c) => {
    if (EngramError.is(error)) return failure(c, error.code, error.message.split('\nFix: ')[0] ?? error.message, error.fix ?? 'see the message')
    mind.logger.error({ method: c.req.method, path: c.req.path, error: String(error) }, 'engram serve: a request failed')
    return failure(c, 'internal', 'The server failed on this request.', `retry; if it fails again, please report it with \`engram doctor\` (engram ${ENGRAM_VERSION})`)
  })
  app.notFound((c) => failure(c, ErrorCode.notFound, `No route ${c.req.method} ${c.req.path}.`, 'see docs/decisions/0038-engram-serve.md for the routes under /v1'))

  app.get('/v1/health', (c) => c.json({ ok: true, version: ENGRAM_VERSION }))

  // Bodies are bounded before anything reads them.
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      onError: (c) => failure(c, ErrorCode.limitExceeded, `The request body is over ${options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES} bytes.`, 'send less per request (split the entries), or store long text through the library'),
    }),
  )

  // State-changing requests from another site are refused (a page the user visits cannot POST here).
  app.use('/v1/*', async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const site = c.req.header('sec-fetch-site')
      const origin = c.req.header('origin')
      const host = c.req.header('host')
      const foreignOrigin = origin !== undefined && origin !== 'null' && (host === undefined || !sameHost(origin, host))
      if ((site !== undefined && site !== 'same-origin' && site !== 'none') || foreignOrigin || origin === 'null') {
        return failure(c, ErrorCode.accessDenied, 'Cross-site requests may not change this memory.', 'call the API from a program (no Origin header) or from a page served by engram serve itself')
      }
      const type = c.req.header('content-type') ?? ''
      if (!/^application\/json\b/i.test(type)) {
        return c.json({ ok: false, error: { code: ErrorCode.invalidArgument, message: `Content-Type ${JSON.stringify(type)} is not JSON.`, fix: 'send the body as JSON with Content-Type: application/json' } }, 415)
      }
    }
    return next()
  })

  // Who the request acts for.
  app.use('/v1/*', async (c, next) => {
    if (credentials.open) {
      // No credentials: only loopback is served (checked at start), and only under a loopback name,
      // so a web page cannot reach it through a DNS name rebound to 127.0.0.1.
      const host = hostName(c.req.header('host') ?? '')
      if (host !== '' && !isLoopback(host)) return failure(c, ErrorCode.accessDenied, `Host ${JSON.stringify(host)} is not this machine's loopback.`, 'call http://127.0.0.1:<port>/, or set serve.tokens to serve other names')
      c.set('principal', { agent: mind.agent, user: undefined, admin: false })
      return next()
    }
    const header = c.req.header('authorization') ?? ''
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
    const challenge = { 'WWW-Authenticate': 'Bearer realm="engram"' }
    if (!match?.[1]) return failure(c, ErrorCode.unauthorized, 'This request has no bearer token.', 'send Authorization: Bearer <token>, a token from serve.tokens', challenge)
    const principal = credentials.lookup(match[1])
    if (!principal) return failure(c, ErrorCode.unauthorized, 'The bearer token is not one of serve.tokens.', 'send a token configured in serve.tokens (ENGRAM_SERVE_TOKENS)', challenge)
    if (principal.agent !== undefined && principal.agent !== mind.agent) {
      return failure(c, ErrorCode.accessDenied, `This token is for agent ${JSON.stringify(principal.agent)}; this server serves ${JSON.stringify(mind.agent)}.`, "use this agent's token, or the server of that agent")
    }
    c.set('principal', principal)
    return next()
  })

  app.post('/v1/turns/begin', async (c) => {
    const body = parseWith(beginSchema, await jsonBody(c), 'The turn', BEGIN_FIX)
    const user = actingUser(c.get('principal'), body.user)
    // A session id belongs to the user it was first opened with.
    const record = await mind.sessions.get(body.session)
    if (record && record.user !== undefined && record.user !== user) {
      throw userError(ErrorCode.accessDenied, `Session ${JSON.stringify(body.session)} is another user's conversation.`, 'use a session id of your own')
    }
    const session = mind.session(body.session, user !== undefined ? { user } : {})
    const turn = await session.begin(body.at !== undefined ? { content: body.message, at: body.at } : body.message)
    return c.json({ ok: true, turn: turnJson(turn) })
  })

  app.post('/v1/turns/end', async (c) => {
    const body = parseWith(endSchema, await jsonBody(c), 'The end of the turn', END_FIX)
    const user = actingUser(c.get('principal'), body.user)
    const stored = await mind.turnProvenance({ sessionId: body.session, turn: body.turn })
    // Another user's turn is answered as one that does not exist.
    if (!stored || stored.user !== user) throw userError(ErrorCode.notFound, `Session ${JSON.stringify(body.session)} has no turn ${body.turn} of this caller.`, 'end the turn that /v1/turns/begin returned, with the same session and user')
    if (stored.replyIds.length > 0) throw userError(ErrorCode.invalidArgument, `Turn ${body.turn} of session ${JSON.stringify(body.session)} has ended already.`, 'begin a new turn for the next reply')
    const ref: TurnRef = { sessionId: stored.sessionId, number: stored.number, messageId: stored.messageId }
    const ended = await mind.session(body.session, user !== undefined ? { user } : {}).end(ref, body.reply as Parameters<ReturnType<Mind['session']>['end']>[1])
    return c.json({ ok: true, ...ended })
  })

  app.post('/v1/memorize', async (c) => {
    const { user: requested, ...input } = parseWith(memorizeBodySchema, await jsonBody(c), 'The memorize request', MEMORIZE_FIX)
    const user = actingUser(c.get('principal'), requested)
    const tool = toolNamed(mind.agentTools({ sessionId: user === undefined ? 'http' : `http:${user}`, ...(user !== undefined ? { user } : {}) }), 'memorize')
    const result = await tool.execute(input)
    if (result.isError) throw toolFailure(result)
    return c.json({ ok: true, report: result.data })
  })

  const search = async (c: Context<Env>, raw: Record<string, unknown>) => {
    const { user: requested, ...input } = raw
    if (requested !== undefined && typeof requested !== 'string') throw userError(ErrorCode.invalidArgument, '"user" must be a string.', SEARCH_FIX)
    const user = actingUser(c.get('principal'), requested === '' ? undefined : requested)
    const tool = toolNamed(mind.agentTools(user !== undefined ? { sessionId: `http:${user}`, user } : undefined), SEARCH_MEMORY_TOOL_NAME)
    const parsed = parseWith(tool.inputSchema, input, 'The search', SEARCH_FIX)
    const result = await tool.execute(parsed)
    if (result.isError) throw toolFailure(result)
    return c.json({ ok: true, ...(result.data as Record<string, unknown>) })
  }
  app.post('/v1/search', async (c) => search(c, await jsonBody(c)))
  app.get('/v1/search', async (c) => {
    const query = c.req.query()
    const raw: Record<string, unknown> = { query: query.query ?? query.q }
    if (query.kinds !== undefined) raw.kinds = query.kinds.split(',').map((kind) => kind.trim())
    if (query.limit !== undefined) raw.limit = Number(query.limit)
    if (query.user !== undefined) raw.user = query.user
    return search(c, raw)
  })

  app.get('/v1/status', async (c) => {
    const principal = c.get('principal')
    // The status counts every user's memories: the agent's and an administrator's view.
    if (principal.user !== undefined && !principal.admin) throw userError(ErrorCode.accessDenied, 'The status of the whole memory is not one user\'s to read.', "use the agent's token or an administrator's")
    return c.json({ ok: true, status: await mind.status() })
  })

  return app
}

function hostName(host: string): string {
  const bracket = /^\[([^\]]*)\]/.exec(host)
  if (bracket) return `[${bracket[1]}]`
  return host.replace(/:\d+$/, '')
}

function sameHost(origin: string, host: string): boolean {
  try {
    return new URL(origin).host.toLowerCase() === host.toLowerCase()
  } catch {
    return false
  }
}
