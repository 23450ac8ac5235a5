/**
 * MCP over streamable HTTP at `/mcp` (decision 0038): the server `engram mcp` serves over stdio
 * (`createMindMcpServer`: the agent tools, the memory files as resources, `primed_context`), over
 * the SDK's web-standard streamable HTTP transport, for whoever the request's token is.
 *
 *   POST   /mcp   JSON-RPC: `initialize` without Mcp-Session-Id opens a session; later messages carry it
 *   DELETE /mcp   ends the session named by Mcp-Session-Id
 *   GET    /mcp   405: this server opens no standalone event stream (it sends nothing unasked)
 *
 * Stateful: a session is one server and one transport, as one `engram mcp` process is one
 * connection, so the pattern monitor's turns and the client's negotiated protocol live as long as
 * the client's session. The session acts for its creator's user (`engram mcp --user`), an
 * administrator's token as `engram mcp --admin`, and stays bound to that caller: another token
 * presenting its id is answered as for an unknown session. Sessions are bounded per caller
 * (serve.mcpSessionsPerCaller: a caller at its bound has its own least recently used session closed
 * to admit its new one) and in all (serve.mcpSessions: a new session is refused with 503 and
 * Retry-After, never made room for with another caller's) — decision 0054. They are closed after an
 * idle spell, on DELETE, and when the mind closes. Answers are JSON, never streams, so no request
 * stays open.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { Hono } from 'hono'
import type { Context } from 'hono'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode } from '../../core/errors.ts'
import { derivedSessionId } from '../../core/session-ids.ts'
import type { Mind } from '../../mind.ts'
import { malformedRequestAnswer } from '../mcp/malformed-requests.ts'
import { createMindMcpServer } from '../mcp/mind-server.ts'
import type { Principal } from './credentials.ts'
import { failure, type ServeEnv } from './support.ts'

/** A session unused this long is closed (an MCP host keeps its session for the life of its window). */
const DEFAULT_MCP_IDLE_MS = 30 * 60_000

/** Seconds a caller refused at the global bound is told to wait (sessions end on DELETE or when idle). */
const FULL_RETRY_AFTER_S = 60
/** Seconds a caller whose every session is answering a call is told to wait (a tool call takes seconds). */
const BUSY_RETRY_AFTER_S = 5

export interface McpRouteOptions {
  mind: Mind
  /** Open sessions of all callers at most (default serve.mcpSessions); at it, a new one is refused with 503. */
  maxSessions?: number
  /** Open sessions of one caller at most (default serve.mcpSessionsPerCaller); at it, the caller's least recently used one closes. */
  maxSessionsPerCaller?: number
  /** A session idle this long is closed (default 30 minutes). */
  idleMs?: number
}

/** One client's MCP session: its server, its transport, and the caller it is bound to. */
interface McpSession {
  server: McpServer
  transport: WebStandardStreamableHTTPServerTransport
  principal: Principal
  /** Whose bound it counts against (`callerOf`). */
  caller: string
  /** SHA-256 of the bearer token that opened it (undefined: opened without one). */
  credential: string | undefined
  lastUsedAt: number
  /** Requests of this session being answered (a long tool call is not idleness). */
  inFlight: number
  idle: NodeJS.Timeout | undefined
}

const SESSION_HEADER = 'mcp-session-id'

/** The bearer token of the request, hashed (the session keeps no token). */
function credentialOf(c: Context<ServeEnv>): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')?.[1]
  return bearer === undefined ? undefined : createHash('sha256').update(bearer).digest('hex')
}

/**
 * Whom a session counts against: who it acts for (agent, user, administrator), not the token — a
 * user with two tokens has one bound, and the agent alone (an open server's every request) has one.
 */
function callerOf(principal: Principal): string {
  return JSON.stringify([principal.agent ?? null, principal.user ?? null, principal.admin])
}

/** The POST body as JSON, read from a copy (the transport reads the body itself); undefined when it is not JSON. */
async function bodyOf(c: Context<ServeEnv>): Promise<unknown> {
  try {
    return JSON.parse(await c.req.raw.clone().text()) as unknown
  } catch {
    return undefined
  }
}

/** Whether the POST body is an MCP `initialize`. */
async function opensSession(c: Context<ServeEnv>): Promise<boolean> {
  const body = await bodyOf(c)
  return Array.isArray(body) ? body.some((message) => isInitializeRequest(message)) : isInitializeRequest(body)
}

/** An MCP session refused for a bound: the error shape with `status` and Retry-After. */
function refused(c: Context<ServeEnv>, status: 429 | 503, retryAfterS: number, message: string, fix: string): Response {
  c.header('Retry-After', String(retryAfterS))
  return c.json({ ok: false, error: { code: ErrorCode.limitExceeded, message, fix } }, status)
}

function sameCaller(session: McpSession, principal: Principal, credential: string | undefined): boolean {
  const owner = session.principal
  return owner.agent === principal.agent && owner.user === principal.user && owner.admin === principal.admin && session.credential === credential
}

/**
 * The `/mcp` route: mount it with `app.route('/mcp', createMcpRoute({ mind }))` after the app's
 * checks (body bound, cross-site, token), which set the principal it reads.
 */
export function createMcpRoute(options: McpRouteOptions): Hono<ServeEnv> {
  const { mind } = options
  const settings = mind.config.values.serve
  const maxSessions = Math.max(1, options.maxSessions ?? settings.mcpSessions)
  const maxPerCaller = Math.max(1, options.maxSessionsPerCaller ?? settings.mcpSessionsPerCaller)
  const idleMs = options.idleMs ?? DEFAULT_MCP_IDLE_MS
  const sessions = new Map<string, McpSession>()
  // Sessions admitted whose initialize is still being answered, per caller: they count against the
  // bounds, so concurrent initializes cannot pass them together.
  const opening = new Map<string, number>()
  let openingTotal = 0
  let mindClosed = false
  let warnedFullAt = Number.NEGATIVE_INFINITY

  const drop = (id: string): McpSession | undefined => {
    const session = sessions.get(id)
    if (!session) return undefined
    sessions.delete(id)
    clearTimeout(session.idle)
    return session
  }
  // Closes in progress: closing a session ends its MCP turn (its learning is queued), which must
  // be done before the mind closes.
  const closing = new Set<Promise<void>>()
  const closeSession = (id: string): Promise<void> => {
    const session = drop(id)
    if (!session) return Promise.resolve()
    const closed: Promise<void> = session.server
      .close()
      .catch((error: unknown) => mind.logger.warn({ session: id, error: String(error) }, 'engram serve: closing an MCP session failed'))
      .finally(() => closing.delete(closed))
    closing.add(closed)
    return closed
  }

  // The mind's owner closes it (engram serve on SIGTERM, a test's after()); its sessions go first,
  // so no tool call starts on a closed mind and nothing of theirs outlives it.
  const closeMind = mind.close
  mind.close = async (options) => {
    mindClosed = true
    await Promise.all([...sessions.keys()].map(closeSession))
    await Promise.all(closing)
    await closeMind.call(mind, options)
  }

  const armIdle = (id: string, session: McpSession): void => {
    const check = (): void => {
      const quiet = Date.now() - session.lastUsedAt
      // A tool call in progress (a model answering) is not idleness.
      if (session.inFlight > 0 || quiet < idleMs) {
        session.idle = setTimeout(check, session.inFlight > 0 ? idleMs : idleMs - quiet).unref()
        return
      }
      void closeSession(id)
    }
    clearTimeout(session.idle)
    session.idle = setTimeout(check, idleMs).unref()
  }

  /**
   * Whether `caller` may open one more session now, closing its own least recently used idle one
   * when it is at its bound; otherwise the refusal. Another caller's session is never closed here.
   */
  const admit = (c: Context<ServeEnv>, caller: string): Response | undefined => {
    const own = [...sessions.entries()].filter(([, session]) => session.caller === caller)
    if (own.length + (opening.get(caller) ?? 0) >= maxPerCaller) {
      const quiet = own.filter(([, session]) => session.inFlight === 0)
      if (quiet.length === 0) {
        return refused(c, 429, BUSY_RETRY_AFTER_S, `This caller has ${maxPerCaller} MCP sessions open, each answering a call now.`, 'retry after Retry-After seconds, end sessions you no longer use (DELETE /mcp with their Mcp-Session-Id), or raise serve.mcpSessionsPerCaller (ENGRAM_SERVE_MCP_SESSIONS_PER_CALLER)')
      }
      // The caller's own least recently used session makes room: a client that lost track of its sessions still gets in.
      const [oldest] = quiet.reduce((a, b) => (b[1].lastUsedAt < a[1].lastUsedAt ? b : a))
      void closeSession(oldest)
      return undefined
    }
    if (sessions.size + openingTotal >= maxSessions) {
      const now = Date.now()
      if (now - warnedFullAt > 60_000) {
        warnedFullAt = now
        mind.logger.warn({ open: sessions.size, max: maxSessions }, `engram serve: ${maxSessions} MCP sessions are open (serve.mcpSessions); new sessions are refused until some end`)
      }
      return refused(c, 503, FULL_RETRY_AFTER_S, `This server has ${maxSessions} MCP sessions open, as many as it serves (serve.mcpSessions).`, 'retry after Retry-After seconds; sessions end when their clients close them (DELETE /mcp) or after 30 minutes idle; the operator may raise serve.mcpSessions (ENGRAM_SERVE_MCP_SESSIONS)')
    }
    return undefined
  }

  const open = async (principal: Principal, credential: string | undefined): Promise<McpSession> => {
    const user = principal.user
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // One JSON answer per POST: no stream held open, so stopping the server never waits on one.
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, session)
        armIdle(id, session)
      },
      // DELETE: the transport closes itself right after this; closing the server too ends the
      // session's MCP turn, and the mind's close waits for it.
      onsessionclosed: (id) => {
        void closeSession(id)
      },
    })
    // The conversation the tools work on, as `engram mcp` names it for the same user.
    const server = createMindMcpServer(mind, { session: { sessionId: derivedSessionId('mcp', user), ...(user !== undefined ? { user } : {}) }, admin: principal.admin })
    const session: McpSession = { server, transport, principal, caller: callerOf(principal), credential, lastUsedAt: Date.now(), inFlight: 0, idle: undefined }
    await server.connect(transport)
    return session
  }

  const handle = async (session: McpSession, c: Context<ServeEnv>): Promise<Response> => {
    session.inFlight++
    session.lastUsedAt = Date.now()
    try {
      // A request the transport would call a parse error (params a string): invalid params, with its id.
      const malformed = c.req.method === 'POST' ? malformedRequestAnswer(await bodyOf(c)) : undefined
      if (malformed) return c.json(malformed)
      return await session.transport.handleRequest(c.req.raw)
    } finally {
      session.inFlight--
      session.lastUsedAt = Date.now()
    }
  }

  const route = new Hono<ServeEnv>()
  route.all('/', async (c) => {
    if (c.req.method !== 'POST' && c.req.method !== 'DELETE') {
      c.header('Allow', 'POST, DELETE')
      return c.json({ ok: false, error: { code: ErrorCode.unsupported, message: `${c.req.method} /mcp is not served: this server opens no event stream of its own.`, fix: 'send MCP messages with POST /mcp (an MCP client over streamable HTTP does)' } }, 405)
    }
    if (mindClosed) return failure(c, ErrorCode.storageUnavailable, 'The server is shutting down.', 'connect again once engram serve is running')
    const principal = c.get('principal')
    const credential = credentialOf(c)
    const id = c.req.header(SESSION_HEADER)
    if (id !== undefined) {
      const session = sessions.get(id)
      // Another caller's session is answered as one that does not exist: its id is no key to it.
      if (!session || !sameCaller(session, principal, credential)) {
        if (session) mind.logger.warn({ owner: session.principal.user ?? null, caller: principal.user ?? null }, 'engram serve: an MCP session id was presented by another caller; refused')
        return failure(c, ErrorCode.notFound, 'This MCP session does not exist for this caller: it ended, was idle too long, or the server restarted.', 'start a new session (an MCP client reconnects by sending initialize without Mcp-Session-Id)')
      }
      return handle(session, c)
    }
    if (c.req.method === 'DELETE') return failure(c, ErrorCode.invalidArgument, 'DELETE /mcp needs the Mcp-Session-Id header of the session to end.', 'send the Mcp-Session-Id the initialize answer carried')
    // No session yet: only an initialize request opens one (within the bounds); the transport answers anything else.
    const caller = callerOf(principal)
    const initializing = await opensSession(c)
    if (initializing) {
      const refusal = admit(c, caller)
      if (refusal) return refusal
      opening.set(caller, (opening.get(caller) ?? 0) + 1)
      openingTotal++
    }
    try {
      const session = await open(principal, credential)
      const response = await handle(session, c)
      if (session.transport.sessionId === undefined) await session.server.close().catch(() => {})
      return response
    } finally {
      if (initializing) {
        const left = (opening.get(caller) ?? 1) - 1
        if (left > 0) opening.set(caller, left)
        else opening.delete(caller)
        openingTotal--
      }
    }
  })
  return route
}
