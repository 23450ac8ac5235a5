/**
 * MCP over HTTP when `engram serve` runs several processes (decision 0089). An MCP session over
 * streamable HTTP is a server and a transport in one process (mcp-http.ts), and its bounds
 * (serve.mcpSessionsPerCaller, serve.mcpSessions, decision 0054) count the sessions of that
 * process. So `/mcp` is answered by one of the processes, the first (`slot 0`): the others pass
 * every `/mcp` request on to it, unread, over a loopback port of its own, and its answer back as
 * it comes. A session then reaches its server whichever process the connection landed on, and the
 * bounds are the whole server's. The first process checks the token as on the public port; the
 * port is on loopback only.
 *
 * The cost is MCP's share of the cores: MCP over HTTP uses one process. The REST API and the
 * dashboard, which keep nothing per process, use them all.
 */
import { Agent, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest, type RequestListener, type ServerResponse } from 'node:http'
import { ErrorCode } from '../../../../core/errors.ts'

/** Headers of one hop that are not passed on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer'])

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())))
}

export function isMcpPath(url: string | undefined): boolean {
  const path = (url ?? '').split('?')[0] ?? ''
  return path === '/mcp' || path.startsWith('/mcp/')
}

function unavailable(response: ServerResponse, why: string): void {
  if (response.headersSent) {
    response.destroy()
    return
  }
  const text = JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32000, message: `MCP over HTTP is not being answered just now: ${why}. Retry after 1 s.`, data: { code: ErrorCode.storageUnavailable, fix: 'retry after Retry-After seconds; the process answering MCP is starting again' } },
  })
  response.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'retry-after': '1' })
  response.end(text)
}

/**
 * `listener` for everything but `/mcp`, which goes to the process listening on `mcpPort()` on
 * loopback (undefined while it is starting: 503 and Retry-After).
 */
export function forwardMcp(listener: RequestListener, mcpPort: () => number | undefined): RequestListener {
  const agent = new Agent({ keepAlive: true })
  return (request: IncomingMessage, response: ServerResponse) => {
    if (!isMcpPath(request.url)) return listener(request, response)
    const port = mcpPort()
    if (port === undefined) return unavailable(response, 'its process is starting')
    const onward = httpRequest({ host: '127.0.0.1', port, method: request.method, path: request.url, headers: endToEnd(request.headers), agent }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers))
      answer.pipe(response)
      answer.once('error', () => response.destroy())
    })
    onward.once('error', (error) => unavailable(response, error.message))
    // The client went away: so does the request passed on (an MCP call in progress is the first process's to finish or cancel).
    response.once('close', () => {
      if (!response.writableFinished) onward.destroy()
    })
    request.pipe(onward)
  }
}
