/**
 * Serving an MCP server over stdio until the client goes away. The SDK's stdio transport reads
 * stdin and writes stdout but does not notice the end of stdin; this does, so `engram mcp` closes
 * its mind and exits when its client closes the pipe (or on SIGINT / SIGTERM).
 *
 * stdout carries nothing but JSON-RPC: while serving, `console.log` / `info` / `debug` (ours or a
 * dependency's) are routed to stderr, where logs belong in stdio mode.
 */
import { type Readable, Transform, type Writable } from 'node:stream'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { malformedRequestAnswer } from './malformed-requests.ts'

export interface StdioStreams {
  stdin: Readable
  stdout: Writable
  /** Where stray console output goes while serving. */
  stderr: Writable
}

/** Why serving ended. */
export type StdioEnd = 'stdin_closed' | 'transport_closed' | 'signal'

/** Serves `server` on the streams; resolves once the client is gone and the server is closed. */
export async function serveStdio(server: McpServer, streams: StdioStreams, options: { signals?: boolean } = {}): Promise<StdioEnd> {
  const consoleMethods = ['log', 'info', 'debug'] as const
  const saved = consoleMethods.map((name) => [name, console[name]] as const)
  const toStderr = (...args: unknown[]): void => {
    streams.stderr.write(`${args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ')}\n`)
  }
  for (const name of consoleMethods) console[name] = toStderr

  let finish: (why: StdioEnd) => void = () => {}
  const ended = new Promise<StdioEnd>((resolve) => {
    finish = resolve
  })
  const onEnd = (): void => finish('stdin_closed')
  const onSignal = (): void => finish('signal')
  streams.stdin.once('end', onEnd)
  streams.stdin.once('close', onEnd)
  if (options.signals) {
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
  }
  const input = streams.stdin.pipe(answeringMalformedRequests(streams.stdout))
  const transport = new StdioServerTransport(input, streams.stdout)
  try {
    await server.connect(transport)
    // Set after connect: the server installs its own onclose on the transport when connecting.
    const serverOnClose = transport.onclose
    transport.onclose = () => {
      serverOnClose?.()
      finish('transport_closed')
    }
    return await ended
  } finally {
    streams.stdin.off('end', onEnd)
    streams.stdin.off('close', onEnd)
    if (options.signals) {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
    await server.close().catch(() => {})
    streams.stdin.unpipe(input)
    for (const [name, fn] of saved) console[name] = fn
  }
}

/** Malformed requests worth an answer are small; a longer line is not held to be read whole. */
const INSPECTED_LINE_BYTES = 1_000_000

/**
 * stdin as the SDK's transport reads it, less the requests it would drop unanswered
 * (`malformedRequestAnswer`): those are answered here; every other line passes as it came.
 */
function answeringMalformedRequests(stdout: Writable): Transform {
  // The start of the line being received, in pieces (no copy per chunk).
  const pending: Buffer[] = []
  let pendingBytes = 0
  // A line longer than INSPECTED_LINE_BYTES goes through as it comes, uninspected.
  let passing = false
  const answered = (line: Buffer): boolean => {
    let message: unknown
    try {
      message = JSON.parse(line.toString('utf8'))
    } catch {
      return false
    }
    const answer = malformedRequestAnswer(message)
    if (answer) stdout.write(`${JSON.stringify(answer)}\n`)
    return answer !== undefined
  }
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const out: Buffer[] = []
      let rest = chunk
      for (let end = rest.indexOf(10); end !== -1; end = rest.indexOf(10)) {
        const tail = rest.subarray(0, end + 1)
        rest = rest.subarray(end + 1)
        if (passing) {
          out.push(tail)
          passing = false
          continue
        }
        const line = pending.length > 0 ? Buffer.concat([...pending.splice(0), tail]) : tail
        pendingBytes = 0
        if (!answered(line)) out.push(line)
      }
      if (rest.length > 0) {
        if (passing) out.push(rest)
        else {
          pending.push(rest)
          pendingBytes += rest.length
          if (pendingBytes > INSPECTED_LINE_BYTES) {
            out.push(...pending.splice(0))
            pendingBytes = 0
            passing = true
          }
        }
      }
      done(null, out.length > 0 ? Buffer.concat(out) : undefined)
    },
    flush(done) {
      done(null, pending.length > 0 ? Buffer.concat(pending) : undefined)
    },
  })
}
