/**
 * Admission control of `engram serve` (decision 0089). A serve process answers on one thread and
 * almost all of a request is CPU (search, priming, SQLite), so requests taken beyond a few only
 * wait behind each other: at 50 clients a `begin` waited 1–3 s in the process's own queue. Here a
 * process works on at most `serve.requestsInWork` requests at once, keeps at most
 * `serve.requestsQueued` more waiting (a turn's beginning first, below), and answers any further
 * one at once with 503, `Retry-After` and the API's error shape (over `/mcp` a JSON-RPC error,
 * which the official client raises with its text), before reading its body: a refusal costs a few
 * microseconds of this thread, so it is answered within the time of the request in work, not the
 * queue's.
 *
 * The operators' probes (`GET /v1/health`, `GET /v1/status`) are never refused nor queued.
 *
 * The beginning of a turn goes ahead of the other requests waiting (decision 0089, amended): its
 * user waits for it before the model can say anything, whereas an end or a memorize comes after
 * the reply, and a search is one step of a reply already under way. A waiting request is passed
 * over by at most `PASSED_OVER_AT_MOST` beginnings, so a stream of them cannot hold the rest back.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { ErrorCode } from '../../../../core/errors.ts'
import { isMcpPath } from './forward-mcp.ts'

interface AdmissionLimits {
  /** Requests answered at once (serve.requestsInWork). */
  requestsInWork: number
  /** Requests waiting beyond them (serve.requestsQueued); one more is refused. */
  requestsQueued: number
}

/** Seconds a refused client is told to wait: a request in work takes milliseconds, the queue drains in well under a second. */
const BUSY_RETRY_AFTER_S = 1

/** At most one log line about refusals per this long, so a flood cannot fill stderr. */
const REFUSAL_LOG_MS = 10_000

const PROBES = new Set(['/v1/health', '/v1/status'])

/**
 * Requests in work when serve.requestsInWork is 0 (decision 0096): on the embedded home a request
 * is CPU on this thread from its start to its answer — SQLite is synchronous and a log line is
 * appended without the thread pool — so one computing and one whose answer is being sent keep the
 * thread busy, and more only interleave and make each wait longer (at 50 clients a turn's
 * beginning waited 260–272 ms at p95 with 4, 173–203 with 2); on PostgreSQL a request also waits
 * for the database's answers, during which another can compute.
 */
export function requestsInWorkOf(configured: number, onPostgres: boolean): number {
  if (configured > 0) return configured
  return onPostgres ? 4 : 2
}

/** How many beginnings of turns may go ahead of a request that waited before them. */
const PASSED_OVER_AT_MOST = 8

/** A request whose caller's user waits for it before anything else happens: the beginning of a turn. */
function goesFirst(request: IncomingMessage): boolean {
  return request.method === 'POST' && (request.url ?? '').split('?')[0] === '/v1/turns/begin'
}

function isProbe(request: IncomingMessage): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false
  const path = (request.url ?? '').split('?')[0] ?? ''
  return PROBES.has(path)
}

/** The refusal of a busy process: 503 and Retry-After, in the API's error shape or as JSON-RPC over /mcp. */
function refuse(request: IncomingMessage, response: ServerResponse, limits: AdmissionLimits): void {
  const message = `This server is busy: it is answering ${limits.requestsInWork} requests with ${limits.requestsQueued} waiting, as many as it takes (serve.requestsInWork, serve.requestsQueued).`
  const fix = `retry after Retry-After seconds (${BUSY_RETRY_AFTER_S}); the operator may add processes (serve.workers) or raise serve.requestsQueued`
  const body = isMcpPath(request.url)
    ? { jsonrpc: '2.0', id: null, error: { code: -32000, message: `${message} Retry after ${BUSY_RETRY_AFTER_S} s.`, data: { code: ErrorCode.limitExceeded, fix } } }
    : { ok: false, error: { code: ErrorCode.limitExceeded, message, fix } }
  const text = JSON.stringify(body)
  response.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'retry-after': String(BUSY_RETRY_AFTER_S), 'referrer-policy': 'no-referrer' })
  response.end(text)
}

/**
 * `listener` behind the bounds: what it is given at once, what waits (beginnings of turns first,
 * each line in arrival order; a waiting request whose client goes away leaves its line), and what
 * is refused.
 */
export function admitRequests(listener: RequestListener, limits: AdmissionLimits, log: (line: string) => void): RequestListener {
  const inWork = Math.max(1, limits.requestsInWork)
  const queueBound = Math.max(0, limits.requestsQueued)
  // Two lines, each in arrival order: beginnings of turns, and the rest.
  const first: Array<() => void> = []
  const rest: Array<() => void> = []
  let passedOver = 0
  const waitingCount = () => first.length + rest.length
  /** The next waiting request: a beginning, unless the oldest of the rest has been passed over enough. */
  const next = (): (() => void) | undefined => {
    if (first.length > 0 && (rest.length === 0 || passedOver < PASSED_OVER_AT_MOST)) {
      if (rest.length > 0) passedOver++
      return first.shift()
    }
    passedOver = 0
    return rest.shift()
  }
  let working = 0
  let refusedSinceLog = 0
  let loggedAt = Number.NEGATIVE_INFINITY

  /** Holds a place in work from now until its answer is out or its connection closes. */
  const hold = (response: ServerResponse): void => {
    working++
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      working--
      if (working < inWork) next()?.()
    }
    if (response.closed) finish()
    else response.once('close', finish)
  }
  const start = (request: IncomingMessage, response: ServerResponse): void => {
    hold(response)
    listener(request, response)
  }

  const admit = (request: IncomingMessage, response: ServerResponse): void => {
    if (working < inWork) {
      start(request, response)
      return
    }
    if (waitingCount() < queueBound) {
      const line = goesFirst(request) ? first : rest
      const go = () => {
        response.off('close', gone)
        start(request, response)
      }
      const gone = () => {
        const at = line.indexOf(go)
        if (at >= 0) line.splice(at, 1)
      }
      response.once('close', gone)
      line.push(go)
      return
    }
    refusedSinceLog++
    const now = Date.now()
    if (now - loggedAt > REFUSAL_LOG_MS) {
      loggedAt = now
      log(`engram serve: busy, ${refusedSinceLog} request(s) refused with 503 (serve.requestsInWork ${inWork}, serve.requestsQueued ${queueBound})`)
      refusedSinceLog = 0
    }
    refuse(request, response, { requestsInWork: inWork, requestsQueued: queueBound })
  }

  return (request, response) => {
    if (isProbe(request)) return listener(request, response)
    if (request.complete || !hasBody(request)) {
      admit(request, response)
      return
    }
    // The parser reads the body sent with the headers right after announcing the request: a tick
    // later, a body sent at once has arrived. One still arriving then (a large upload, a client
    // trickling it) is not made to wait in the queue nor allowed to hold a place while it
    // arrives — eight slow clients would otherwise shut everyone out until their request timeout
    // (serve.requestTimeoutMs): it goes to work as it comes and counts as in work once it is in.
    setImmediate(() => {
      if (request.complete) {
        admit(request, response)
        return
      }
      request.once('end', () => hold(response))
      listener(request, response)
    })
  }
}

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length']
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
}
