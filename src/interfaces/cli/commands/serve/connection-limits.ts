/**
 * What one client may hold of `engram serve` (decision 0056). Node's defaults let a
 * client take 300 s to send one request and open as many connections as it likes: 200 connections
 * trickling a body byte by byte all stayed open past 40 s. Here:
 *
 * - the time to send a request's headers, and the whole request with its body, is bounded
 *   (`serve.headersTimeoutMs`, `serve.requestTimeoutMs`): Node answers 408 and closes the
 *   connection. Only receiving is bounded: an answer still being sent (a large export) is not;
 * - a connection kept alive between requests closes after `serve.keepAliveTimeoutMs`;
 * - one client address holds at most `serve.maxConnectionsPerClient` connections. One beyond them
 *   is on probation: it is served if its whole request arrives within {@link PROBATION_MS}, and
 *   closed after its answer, so a well-behaved request of that client still gets through while
 *   its slow connections wait out their timeouts; a probation connection that trickles gets 429
 *   and is closed;
 * - all clients together hold at most `serve.maxConnections`. When they do, a new connection takes
 *   the place of the oldest probation connection still waiting for its request (429); else of the
 *   oldest connection, of any client, that has been open {@link PROBATION_MS} without sending a
 *   whole request (503) — a flood of slow connections from many addresses, one each, would
 *   otherwise keep every newcomer out until their timeouts; else of the oldest idle one of the
 *   client holding the most, when that is at least two more than the newcomer's client holds
 *   (503), so a flood cannot lock out a client that holds fewer; when none exists, the new one
 *   gets 503 and is closed before the HTTP layer sees it.
 */
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { ConfigValues } from '../../../../config/resolve.ts'
import { ErrorCode } from '../../../../core/errors.ts'

type ServeSettings = ConfigValues['serve']
export type ConnectionLimits = Pick<ServeSettings, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'maxConnectionsPerClient' | 'maxConnections'>

/**
 * A connection beyond its client's limit must deliver its whole request within this long. A
 * program on loopback or a LAN sends a request of up to the 1 MB body bound in well under a
 * second; a client that needs longer has its own connections for that.
 */
const PROBATION_MS = 1_000

/** A refused connection that neither reads its answer nor closes is cut after this long. */
const REFUSED_LINGER_MS = 2_000

/** At most one log line about refused connections per this long, so a flood cannot fill stderr. */
const REFUSAL_LOG_MS = 10_000

/**
 * The options of `http.createServer` for these limits. Node looks for expired requests every
 * `connectionsCheckingInterval` (30 s by default, which would let a 10 s headers timeout run to
 * 40 s): a quarter of the shorter timeout, at most a second, keeps the overshoot small.
 */
export function serverTimeouts(limits: ConnectionLimits): ServerOptions {
  const headersTimeout = headersBound(limits)
  return {
    headersTimeout,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(headersTimeout / 4))),
  }
}

/**
 * The headers are part of the request, so a shorter request timeout bounds them as well (Node
 * refuses a server whose headers timeout is the longer one): setting only the request timeout
 * lower is enough.
 */
function headersBound(limits: ConnectionLimits): number {
  return Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs)
}

interface Tracked {
  client: string
  /** Beyond the client's limit: served once if quick, then closed. */
  probation: boolean
  /** When it connected (Date.now()). */
  since: number
  request?: IncomingMessage
  response?: ServerResponse
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client (a dual-stack listener reports the first). */
function clientOf(socket: Socket): string {
  const address = socket.remoteAddress ?? ''
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address
}

/** A whole HTTP answer written on the raw socket, in the API's error shape. */
function refusal(status: 429 | 503, message: string, fix: string): string {
  const body = JSON.stringify({ ok: false, error: { code: ErrorCode.limitExceeded, message, fix } })
  const reason = status === 429 ? 'Too Many Requests' : 'Service Unavailable'
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n${body}`
}

/** Answers and closes a connection the HTTP layer never sees: what it sends is read and dropped. */
function refuse(socket: Socket, answer: string): void {
  socket.on('error', () => {})
  socket.resume()
  socket.end(answer)
  const cut = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS)
  cut.unref()
  socket.once('close', () => clearTimeout(cut))
}

/**
 * Puts the connection limits in front of `server`'s HTTP layer. Call it before the server accepts
 * anything (in the tick that calls `listen`): it takes over the server's own `connection`
 * listener, so that a refused connection never reaches the HTTP parser — a request arriving on it
 * is neither read nor run.
 */
export function limitConnections(server: Server, limits: ConnectionLimits, log: (line: string) => void): void {
  /** Each client's connections within its limit, oldest first. */
  const perClient = new Map<string, Map<Socket, Tracked>>()
  /** Connections beyond their client's limit, oldest first: the first to go when the server is full. */
  const onProbation = new Map<Socket, Tracked>()
  const tracked = new WeakMap<Socket, Tracked>()
  let open = 0
  const probationMs = Math.min(PROBATION_MS, headersBound(limits))

  let lastLogged = 0
  let unlogged = 0
  const noteRefusal = (line: string) => {
    const now = Date.now()
    if (now - lastLogged < REFUSAL_LOG_MS) {
      unlogged++
      return
    }
    log(`engram serve: ${line}${unlogged > 0 ? ` (and ${unlogged} more refusal(s) since the last line)` : ''}`)
    lastLogged = now
    unlogged = 0
  }

  /** Answering a request it has received whole: never cut to make room. */
  const busy = (entry: Tracked) => entry.request?.complete === true && entry.response !== undefined && !entry.response.writableFinished
  /** The answer (when nothing was answered on it yet) and the cut, for an admitted connection. */
  const cut = (socket: Socket, entry: Tracked, answer: string, line: string) => {
    onProbation.delete(socket)
    perClient.get(entry.client)?.delete(socket)
    noteRefusal(line)
    // The client may still see the connection reset if it was sending, which refuses it as well.
    if (entry.response?.headersSent !== true) socket.write(answer)
    socket.destroy()
  }
  const perClientRefusal = (why: string) =>
    refusal(429, `This client holds ${limits.maxConnectionsPerClient} connections, the limit per client (serve.maxConnectionsPerClient), and another one ${why}.`, 'close idle connections or send whole requests; an operator can raise serve.maxConnectionsPerClient (ENGRAM_SERVE_MAX_CONNECTIONS_PER_CLIENT)')
  const fullFix = 'retry in a moment; an operator can raise serve.maxConnections (ENGRAM_SERVE_MAX_CONNECTIONS)'

  /**
   * Room for a connection of `client` on a full server: the oldest probation connection still
   * waiting for its request; else the oldest connection not answering anything of the client that
   * holds the most, when it holds at least two more than `client` (so nobody is cut for a client
   * that already has its share). A flood, from one address or many, cannot keep out a client that
   * holds fewer connections than the flooders.
   */
  const makeRoom = (client: string): boolean => {
    for (const [socket, entry] of onProbation) {
      if (entry.request?.complete || socket.destroyed) continue
      cut(socket, entry, perClientRefusal('was closed to make room while the server was full'), `${entry.client} is beyond serve.maxConnectionsPerClient; closed one of its connections with 429 to make room`)
      return true
    }
    // Stalled: open a while and no whole request yet (silent, or trickling its first request).
    const now = Date.now()
    let stalled: [Socket, Tracked] | undefined
    for (const sockets of perClient.values()) {
      for (const [socket, entry] of sockets) {
        if (entry.request?.complete || socket.destroyed || now - entry.since < probationMs) continue
        if (!stalled || entry.since < stalled[1].since) stalled = [socket, entry]
        break // each client's map is oldest first
      }
    }
    if (stalled) {
      const [socket, entry] = stalled
      cut(socket, entry, refusal(503, `The server holds ${open} connections, its limit (serve.maxConnections), and this one sent no whole request within ${probationMs} ms: it was closed for a newcomer.`, fullFix), `server full (serve.maxConnections); closed a connection of ${entry.client} that sent no whole request within ${probationMs} ms, for one of ${client}`)
      return true
    }
    let heaviest: Map<Socket, Tracked> | undefined
    for (const sockets of perClient.values()) if (!heaviest || sockets.size > heaviest.size) heaviest = sockets
    if (!heaviest || heaviest.size <= (perClient.get(client)?.size ?? 0) + 1) return false
    for (const [socket, entry] of heaviest) {
      if (busy(entry) || socket.destroyed) continue
      cut(socket, entry, refusal(503, `The server holds ${open} connections, its limit (serve.maxConnections), and this client the most of them (${heaviest.size}): its oldest idle one was closed for another client's.`, fullFix), `server full (serve.maxConnections); closed an idle connection of ${entry.client}, which held ${heaviest.size}, for one of ${client}`)
      return true
    }
    return false
  }

  const http = server.listeners('connection') as Array<(socket: Socket) => void>
  server.removeAllListeners('connection')
  server.on('connection', (socket: Socket) => {
    if (socket.destroyed) return
    const client = clientOf(socket)
    if (limits.maxConnections > 0 && open >= limits.maxConnections && !makeRoom(client)) {
      noteRefusal(`${open} connections open (serve.maxConnections); refused one from ${client} with 503`)
      refuse(socket, refusal(503, `The server holds ${open} connections, its limit (serve.maxConnections).`, fullFix))
      return
    }
    const own = perClient.get(client) ?? new Map<Socket, Tracked>()
    perClient.set(client, own)
    const probation = limits.maxConnectionsPerClient > 0 && own.size >= limits.maxConnectionsPerClient
    const entry: Tracked = { client, probation, since: Date.now() }
    tracked.set(socket, entry)
    open++
    if (probation) onProbation.set(socket, entry)
    else own.set(socket, entry)
    socket.once('close', () => {
      open--
      onProbation.delete(socket)
      own.delete(socket)
      if (own.size === 0 && perClient.get(client) === own) perClient.delete(client)
    })
    if (probation) {
      const verdict = () => {
        if (entry.request?.complete || socket.destroyed) return
        cut(socket, entry, perClientRefusal(`sent no whole request within ${probationMs} ms`), `${client} holds its ${limits.maxConnectionsPerClient} connections (serve.maxConnectionsPerClient) and another sent no whole request within ${probationMs} ms; closed it with 429`)
      }
      // Timers run before the poll for input: a request that arrived while the process was busy is
      // read first (setImmediate comes after the poll), so it is not refused for the server's delay.
      const check = setTimeout(() => setImmediate(verdict), probationMs)
      check.unref()
      socket.once('close', () => clearTimeout(check))
    }
    for (const listener of http) listener.call(server, socket)
  })

  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const entry = tracked.get(request.socket)
    if (!entry) return
    entry.request = request
    entry.response = response
    // Served once, never kept alive: the connection holds no slot of its client's.
    if (entry.probation) response.setHeader('connection', 'close')
  })
}
