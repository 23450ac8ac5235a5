/**
 * The HTTP API of `engram serve` (decision 0038) as a Hono app over one open mind — no
 * socket here: `engram serve` listens, tests call `app.request()`.
 *
 * The routes, each with what it takes and answers: docs/http-api.md, generated from the route table
 * (`npm run docs`), or `GET /v1/openapi.json`. They are added below and in routes-memory.ts and
 * routes-manage.ts.
 *
 * Every answer is `{ ok: true, … }` or `{ ok: false, error: { code, message, fix } }`, the code one
 * of `ErrorCode` (or `internal`), the HTTP status from the code. Routes are added through
 * `apiRoutes` (openapi.ts), so the OpenAPI document lists exactly what is served.
 */
import { Hono } from 'hono'
import type { Context } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { z } from 'zod'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { derivedSessionId } from '../../core/session-ids.ts'
import type { MindInternals } from '../../mind-internals.ts'
import type { TurnRef } from '../../session/session.ts'
import type { Turn } from '../../session/turn.ts'
import { memorizeInputSchema } from '../../tools/memorize-tool.ts'
import { SEARCH_MEMORY_TOOL_NAME } from '../../tools/search-memory-tool.ts'
import { ENGRAM_VERSION } from '../cli/version.ts'
import { addBrowserSessions, browserRequestOf, browserSessionOf } from './browser-session.ts'
import { type Credentials, isLoopback, parseCredentials } from './credentials.ts'
import { apiRoutes, openApiDocument } from './openapi.ts'
import { addManageRoutes } from './routes-manage.ts'
import { addMemoriesRoutes } from './routes-memories.ts'
import { addMemoryRoutes, checkSessionOwner } from './routes-memory.ts'
import { createDashboard } from './dashboard/index.ts'
import { createMcpRoute } from './mcp-http.ts'
import { actingUser, failure, requireWellFormed, type ServeEnv, sessionField, toolFailure, toolNamed, userError, userField } from './support.ts'

/** Default bound of a request body: far above any turn a person types, far below what hurts. */
export const DEFAULT_MAX_BODY_BYTES = 1_000_000

export interface ServeAppOptions {
  mind: MindInternals
  /** Who may call (`parseCredentials(serve.tokens)`); default: the mind's `serve.tokens`. */
  credentials?: Credentials
  /** Largest request body in bytes (default 1 MB); larger ones get 413. */
  maxBodyBytes?: number
}

const beginSchema = z.object({
  session: sessionField,
  message: z.string(),
  user: userField,
  at: z.iso.datetime({ offset: true }).optional(),
  compact: z.boolean().optional().describe("true: the turn without what a host only reads to inspect it — its provenance (stored: GET /v1/turns/{session}/{turn}) and systemParts (system joined) — about half the answer's bytes"),
})
const beginBody = { schema: beginSchema, what: 'The turn', fix: 'send {"session": "s1", "message": "the user\'s message", "user": "optional, only with an administrator\'s token", "compact": "optional, true for the turn without provenance and systemParts"}' }

const endSchema = z.object({
  session: sessionField,
  turn: z.number().int().min(1),
  reply: z.union([z.string(), z.array(z.unknown())]),
  user: userField,
})
const endBody = { schema: endSchema, what: 'The end of the turn', fix: 'send {"session": "s1", "turn": <number from /v1/turns/begin>, "reply": "the agent\'s reply, or the turn\'s messages"}' }

const memorizeBody = {
  schema: memorizeInputSchema.extend({ user: userField }),
  what: 'The memorize request',
  fix: 'send {"entries": [{"text": "…", "kind": "always|never|when|lesson|profile"}]}, as the memorize tool takes them',
}

const searchQuerySchema = z.object({
  query: z.string().describe('a few distinctive words (q is accepted too)'),
  kinds: z.string().optional().describe('comma-separated kinds, e.g. lesson,rule'),
  limit: z.string().optional().describe('most hits'),
  user: userField,
})
const SEARCH_FIX = 'send {"query": "a few distinctive words", "kinds": ["lesson", …] (optional), "limit": 10 (optional)}, or GET /v1/search?query=…&kinds=lesson,rule&limit=10'

/** A search's `user` of "" is no user: an empty `?user=` of a form, or the same in a body. */
const withoutEmptyUser = (raw: unknown) => (isRecord(raw) && raw.user === '' ? { ...raw, user: undefined } : raw)

/**
 * The search request parsed as the search_memory tool takes it, plus `user`: the body as it is
 * (`searchInput`), or the query string (`query` or `q`, `kinds` comma-separated, `limit`) turned
 * into that body. Each renders in the OpenAPI document as its input side: the body's schema, the
 * query's strings.
 */
function searchParts(searchInput: z.ZodObject) {
  const input = searchInput.extend({ user: userField })
  const fromQuery = searchQuerySchema
    .transform(({ kinds, limit, ...rest }): Record<string, unknown> => ({
      ...rest,
      ...(kinds !== undefined ? { kinds: kinds.split(',').map((kind) => kind.trim()) } : {}),
      ...(limit !== undefined ? { limit: Number(limit) } : {}),
    }))
    .pipe(input)
  const qForQuery = (raw: unknown) => (isRecord(raw) && raw.query === undefined ? { ...raw, query: raw.q } : raw)
  return {
    body: { schema: z.preprocess(withoutEmptyUser, input), what: 'The search', fix: SEARCH_FIX },
    query: { schema: z.preprocess((raw) => withoutEmptyUser(qForQuery(raw)), fromQuery), what: 'The search', fix: SEARCH_FIX },
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A turn as JSON: its tools by name, description and input schema (their functions stay here).
 * `compact` leaves out what a host reads only to inspect the turn, not to call its model: the
 * provenance (stored with the turn, `GET /v1/turns/{session}/{turn}`) and `systemParts` (what
 * `system` joins). Of a 46 KB answer on a small home they are 23 KB, each serialized, sent and
 * parsed per turn (decision 0089, amended).
 */
function turnJson(turn: Turn, compact: boolean): Record<string, unknown> {
  const { tools, ...rest } = turn
  const described = tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.jsonSchema }))
  if (!compact) return { ...rest, tools: described }
  const { provenance, systemParts, ...kept } = rest
  return { ...kept, tools: described }
}

/** The Hono app of `engram serve` over `mind`. The caller owns the mind and closes it. */
export function createServeApp(options: ServeAppOptions): Hono<ServeEnv> {
  const { mind } = options
  const credentials = options.credentials ?? parseCredentials(mind.config.values.serve.tokens)
  const app = new Hono<ServeEnv>()

  app.onError((error, c) => {
    if (EngramError.is(error)) return failure(c, error.code, error.message, error.fix ?? 'see the message')
    mind.logger.error({ method: c.req.method, path: c.req.path, error: String(error) }, 'engram serve: a request failed')
    return failure(c, 'internal', 'The server failed on this request.', `retry; if it fails again, please report it with \`engram doctor\` (engram ${ENGRAM_VERSION})`)
  })
  app.notFound((c) => failure(c, ErrorCode.notFound, `No route ${c.req.method} ${c.req.path}.`, 'see docs/decisions/0038-engram-serve.md for the routes under /v1'))

  // No answer of this server sends its address on as a Referer: not the 303 that takes ?token=
  // out of the address, not a page, not the API (decision 0051).
  app.use('*', async (c, next) => {
    await next()
    c.header('Referrer-Policy', 'no-referrer')
  })

  const api = apiRoutes(app)
  // Served before the checks below: no credentials, nothing of the memory in them.
  api.add({ method: 'get', path: '/v1/health', summary: 'Whether the server is up', returns: 'version: the engram version', open: true }, (c) => c.json({ ok: true, version: ENGRAM_VERSION }))
  api.add({ method: 'get', path: '/v1/openapi.json', summary: 'This document: every route, its request schema and the error shape', returns: 'the OpenAPI 3.1 document', open: true, unwrapped: true }, (c) =>
    c.json(openApiDocument(api.routes, { version: ENGRAM_VERSION })),
  )

  // Bodies are bounded before anything reads them.
  app.use(
    '*',
    bodyLimit({
      maxSize: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      onError: (c) => failure(c, ErrorCode.limitExceeded, `The request body is over ${options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES} bytes.`, 'send less per request (split the entries), or store long text through the library'),
    }),
  )

  // State-changing requests from another site are refused (a page the user visits cannot POST here).
  app.use('*', async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const site = c.req.header('sec-fetch-site')
      const origin = c.req.header('origin')
      const host = c.req.header('host')
      const foreignOrigin = origin !== undefined && origin !== 'null' && (host === undefined || !sameHost(origin, host))
      if ((site !== undefined && site !== 'same-origin' && site !== 'none') || foreignOrigin || origin === 'null') {
        return failure(c, ErrorCode.accessDenied, 'Cross-site requests may not change this memory.', 'call the API from a program (no Origin header) or from a page served by engram serve itself')
      }
      const type = c.req.header('content-type') ?? ''
      // A DELETE without a body (how an MCP client ends its session) has nothing to check; a page
      // on another site cannot send a DELETE here without a preflight this server never grants.
      const bodiless = c.req.method === 'DELETE' && (c.req.header('content-length') ?? '0') === '0' && c.req.header('transfer-encoding') === undefined
      if (!bodiless && !/^application\/json\b/i.test(type)) {
        return c.json({ ok: false, error: { code: ErrorCode.invalidArgument, message: `Content-Type ${JSON.stringify(type)} is not JSON.`, fix: 'send the body as JSON with Content-Type: application/json' } }, 415)
      }
    }
    return next()
  })

  // Without credentials configured, only loopback is served (checked at start), and only under a
  // loopback name, so a web page cannot reach it through a DNS name rebound to 127.0.0.1.
  app.use('*', async (c, next) => {
    if (credentials.open) {
      const host = hostName(c.req.header('host') ?? '')
      if (host !== '' && !isLoopback(host)) return failure(c, ErrorCode.accessDenied, `Host ${JSON.stringify(host)} is not this machine's loopback.`, 'call http://127.0.0.1:<port>/, or set serve.tokens to serve other names')
    }
    return next()
  })

  // A browser's ?token= becomes a session at this server's own place, where the dashboard is served (decision 0051).
  addBrowserSessions(app, credentials)

  // Who the request acts for: a bearer token; a browser's session on the dashboard (browserSessionOf);
  // without credentials configured, the agent alone (loopback only).
  app.use('*', async (c, next) => {
    const challenge = { 'WWW-Authenticate': 'Bearer realm="engram"' }
    const header = c.req.header('authorization')
    const bearer = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1]
    if (header !== undefined && bearer === undefined) return failure(c, ErrorCode.unauthorized, 'The Authorization header is not "Bearer <token>".', 'send Authorization: Bearer <token>, a token from serve.tokens', challenge)
    const browser = browserRequestOf(c)
    const principal = bearer !== undefined ? credentials.lookup(bearer) : browserSessionOf(c, credentials)
    if (!principal) {
      if (credentials.open && bearer === undefined) {
        c.set('principal', { agent: mind.agent, user: undefined, admin: false })
        return next()
      }
      if (bearer !== undefined) return failure(c, ErrorCode.unauthorized, 'The bearer token is not one of serve.tokens.', 'send a token configured in serve.tokens (ENGRAM_SERVE_TOKENS)', challenge)
      if (browser !== undefined) return failure(c, ErrorCode.unauthorized, 'This browser has no session of this server, or it has expired.', 'open the dashboard with ?token=<your token from serve.tokens> once; the browser keeps a session for this server only')
      return failure(c, ErrorCode.unauthorized, 'This request has no bearer token.', 'send Authorization: Bearer <token>, a token from serve.tokens', challenge)
    }
    if (principal.agent !== undefined && principal.agent !== mind.agent) {
      return failure(c, ErrorCode.accessDenied, `This token is for agent ${JSON.stringify(principal.agent)}; this server serves ${JSON.stringify(mind.agent)}.`, "use this agent's token, or the server of that agent")
    }
    c.set('principal', principal)
    return next()
  })

  // The address, checked once for every route (the dashboard's too): a %00 in a path segment or
  // query value is refused here, not by PostgreSQL as a server error (decision 0055). Bodies are
  // checked where they are parsed (jsonBody, parseWith).
  app.use('*', async (c, next) => {
    const url = new URL(c.req.url)
    const segments = url.pathname.split('/').map((segment) => {
      try {
        return decodeURIComponent(segment)
      } catch {
        return segment
      }
    })
    requireWellFormed({ path: segments, query: Object.fromEntries(url.searchParams) }, 'The address')
    return next()
  })

  api.add({ method: 'post', path: '/v1/turns/begin', summary: 'Begin a turn: store the message, prime the prompt', returns: 'turn: system, its parts, messages, provenance, budgets, warnings, confirmations waiting for the user, the tools by name, description and input schema; with compact, without provenance and the parts', body: beginBody }, async (c, { body }) => {
    const user = actingUser(c.get('principal'), body.user)
    await checkSessionOwner(mind, body.session, user)
    const session = mind.session(body.session, user !== undefined ? { user } : {})
    const turn = await session.begin(body.at !== undefined ? { content: body.message, at: body.at } : body.message)
    return c.json({ ok: true, turn: turnJson(turn, body.compact === true) })
  })

  api.add({ method: 'post', path: '/v1/turns/end', summary: 'End a turn: store the reply, schedule the learning', returns: 'messageIds: the stored replies; scheduled: the work queued; warnings; confirmations: the memories waiting for the user\'s yes or no (copilot mode)', body: endBody }, async (c, { body }) => {
    const user = actingUser(c.get('principal'), body.user)
    const stored = await mind.turnProvenance({ sessionId: body.session, turn: body.turn })
    // Another user's turn is answered as one that does not exist.
    if (!stored || stored.user !== user) throw userError(ErrorCode.notFound, `Session ${JSON.stringify(body.session)} has no turn ${body.turn} of this caller.`, 'end the turn that /v1/turns/begin returned, with the same session and user')
    if (stored.replyIds.length > 0) throw userError(ErrorCode.invalidArgument, `Turn ${body.turn} of session ${JSON.stringify(body.session)} has ended already.`, 'begin a new turn for the next reply')
    const ref: TurnRef = { sessionId: stored.sessionId, number: stored.number, messageId: stored.messageId }
    const ended = await mind.session(body.session, user !== undefined ? { user } : {}).end(ref, body.reply as Parameters<ReturnType<MindInternals['session']>['end']>[1])
    return c.json({ ok: true, ...ended })
  })

  api.add({ method: 'post', path: '/v1/memorize', summary: 'Save memories through the encoding gate (the memorize tool)', returns: 'report: saved, duplicates, pending confirmation, suppressed, rejected', body: memorizeBody }, async (c, { body }) => {
    const { user: requested, ...input } = body
    const user = actingUser(c.get('principal'), requested)
    const tool = toolNamed(mind.agentTools({ sessionId: derivedSessionId('http', user), ...(user !== undefined ? { user } : {}) }), 'memorize')
    const result = await tool.execute(input)
    if (result.isError) throw toolFailure(result)
    return c.json({ ok: true, report: result.data })
  })

  const search = async (c: Context<ServeEnv>, { user: requested, ...input }: { user?: string | undefined }) => {
    const user = actingUser(c.get('principal'), requested)
    const tool = toolNamed(mind.agentTools(user !== undefined ? { sessionId: derivedSessionId('http', user), user } : undefined), SEARCH_MEMORY_TOOL_NAME)
    const result = await tool.execute(input)
    if (result.isError) throw toolFailure(result)
    return c.json({ ok: true, ...(result.data as Record<string, unknown>) })
  }
  const searchRequest = searchParts(toolNamed(mind.agentTools(), SEARCH_MEMORY_TOOL_NAME).inputSchema as z.ZodObject)
  const searchReturns = 'hits: ranked memories with their text, kind, source and score (the search_memory tool\'s result); a query that asks for order, change or the whole story lists its thread\'s turns first, in time order, each with thread'
  api.add({ method: 'post', path: '/v1/search', summary: 'Search the memory (the search_memory tool)', returns: searchReturns, body: searchRequest.body }, (c, { body }) => search(c, body))
  api.add({ method: 'get', path: '/v1/search', summary: 'Search the memory (the search_memory tool), from the query string', returns: searchReturns, query: searchRequest.query }, (c, { query }) => search(c, query))

  addMemoryRoutes(api, mind)
  addManageRoutes(api, mind)
  addMemoriesRoutes(api, mind)

  api.add({ method: 'get', path: '/v1/status', summary: 'Counts of every kind of memory, the capabilities, unreadable lines', returns: "status: the mind's status (the agent's or an administrator's token only)" }, async (c) => {
    const principal = c.get('principal')
    // The status counts every user's memories: the agent's and an administrator's view.
    if (principal.user !== undefined && !principal.admin) throw userError(ErrorCode.accessDenied, 'The status of the whole memory is not one user\'s to read.', "use the agent's token or an administrator's")
    return c.json({ ok: true, status: await mind.status() })
  })

  app.route('/mcp', createMcpRoute({ mind }))
  app.route('/', createDashboard({ mind }))

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
