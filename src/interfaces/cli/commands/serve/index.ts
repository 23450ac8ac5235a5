/**
 * `engram serve`: the HTTP API over this agent's memory (decision 0038) on serve.host :
 * serve.port, loopback by default. The due background work runs on the serve.maintain cron
 * schedule; on SIGINT / SIGTERM the server stops the schedule, stops accepting, waits for the
 * requests in flight, gives the background work a short grace (what still runs then goes back to
 * the queue), closes the mind and returns 0. What a
 * client may hold of it (time to send a request, connections per client and in all) is bounded by
 * the serve.* settings (`connection-limits.ts`, decision 0056); what a process takes on at once,
 * and refuses with 503 beyond, by serve.requestsInWork and serve.requestsQueued (`admission.ts`).
 * With serve.workers above 1 the command's process forks that many serving processes on the
 * one port (`workers.ts`, decision 0089), each of them running `serveProcess` below.
 *
 * One line goes to stdout when it listens (`{"listening": "http://127.0.0.1:7477"}` or the text),
 * so a script or a test learns the port chosen for `--port 0`; logs go to stderr.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { getRequestListener } from '@hono/node-server'
import { Cron } from 'croner'
import { EngramError, ErrorCode, messageOf } from '../../../../core/errors.ts'
import type { MindInternals } from '../../../../mind-internals.ts'
import { createServeApp } from '../../../http/app.ts'
import { checkBind, parseCredentials, withDashboardToken } from '../../../http/credentials.ts'
import type { Command, CommandContext, CommandResult } from '../../command.ts'
import { openMind } from '../../open-mind.ts'
import { admitRequests, requestsInWorkOf } from './admission.ts'
import { limitConnections, serverTimeouts } from './connection-limits.ts'
import { forwardMcp } from './forward-mcp.ts'
import { runWorkers, startLine, untilSignal, type WorkerRole, workerCount, workerRole } from './workers.ts'

/**
 * After the signal, requests in flight get this long to finish before their connections are cut:
 * a request takes milliseconds, a few seconds at the p99 of 50 clients saturating the server
 * (BENCHMARKS.md), so only a stuck client reaches it, and a supervisor's own grace period (systemd
 * 90 s, Kubernetes 30 s) is not spent waiting on one.
 */
const DRAIN_MS = 10_000

/**
 * After SIGINT / SIGTERM and the requests' drain, how long the background work (an MCP turn's
 * learning, a maintenance run waiting on a model) may go on before it is handed back to the queue,
 * where the next maintain anywhere (`engram maintain`, this server's next scheduled run) runs it
 * at once. The drain and this stay well inside a supervisor's grace (Kubernetes 30 s), which a
 * model call (llm.timeoutMs, 60 s by default) would not.
 */
const SIGNAL_GRACE_MS = 5_000

/**
 * The due background work on a cron schedule. `mind.maintain()` decides what is due (each job is
 * keyed by its period, so a schedule more frequent than the work runs it once); croner's `protect`
 * skips a tick while the previous run is still going, and `stop()` stops the ticks and returns that
 * run (a stopping server gives it a grace, not its whole length).
 */
function scheduleMaintenance(mind: MindInternals, pattern: string, log: (line: string) => void): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve()
  let job: Cron
  try {
    job = new Cron(pattern, { protect: true, unref: true }, () => {
      // What degraded in a run is logged by the mind as it happens (log.level); a failed run here.
      running = mind.maintain().then(
        () => {},
        (error: unknown) => log(`engram serve: maintenance failed: ${messageOf(error)}`),
      )
      return running
    })
  } catch (error) {
    throw new EngramError({
      code: ErrorCode.configInvalid,
      category: 'user',
      message: `serve.maintain ${JSON.stringify(pattern)} is not a cron pattern: ${(error as Error).message}`,
      fix: 'give 5 fields (minute hour day month weekday, e.g. "*/5 * * * *") or 6 with seconds first, in serve.maintain or ENGRAM_SERVE_MAINTAIN',
      cause: error,
    })
  }
  return {
    stop() {
      job.stop()
      return running
    },
  }
}

/**
 * Between the signal and closing the connections that carry no request: long enough for the
 * process to read what has already arrived. A request whose bytes are in but that a busy process
 * has not parsed yet leaves its connection "idle" for Node, and closing it would drop the request
 * unanswered although the client sent it before the signal.
 */
const SETTLE_MS = 100

/**
 * Stopping that lets every request in flight finish and then takes no more. Node's
 * `server.close()` stops accepting connections but goes on serving the keep-alive ones it has, so
 * clients that keep sending would hold a stopping server until they stop (the load test saw 10 s
 * of it): every answer sent after the signal says `Connection: close`, and a connection is closed
 * as soon as its answer is out. A request that reaches a connection as it closes gets no answer
 * (and was not read): the client sees the connection reset, as when the server has gone.
 */
function drainOnStop(server: Server, log: (line: string) => void): { stop(): Promise<void> } {
  const inFlight = new Set<ServerResponse>()
  let stopping = false
  server.prependListener('request', (_request, response: ServerResponse) => {
    if (stopping) response.setHeader('connection', 'close')
    inFlight.add(response)
    response.once('close', () => {
      inFlight.delete(response)
      if (stopping) setImmediate(() => server.closeIdleConnections())
    })
  })
  return {
    async stop() {
      stopping = true
      for (const response of inFlight) if (!response.headersSent) response.setHeader('connection', 'close')
      await new Promise((settled) => setTimeout(settled, SETTLE_MS))
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => {
          log(`engram serve: ${inFlight.size} request(s) still open after ${DRAIN_MS / 1000} s; closing their connections`)
          server.closeAllConnections()
        }, DRAIN_MS)
        server.close(() => {
          clearTimeout(cut)
          resolve()
        })
        server.closeIdleConnections()
      })
    },
  }
}

/** Listens on `port` of `host` (shared by the processes of a cluster unless `exclusive`); rejects with the listening error. */
function listenOn(server: Server, host: string, port: number, exclusive = false): Promise<AddressInfo> {
  return new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host, port, exclusive }, () => {
      server.off('error', reject)
      resolve(server.address() as AddressInfo)
    })
  })
}

/**
 * One serving process: the whole server (`role` undefined), or one of several forked by the first
 * process (workers.ts), which prints the start-up line, and forwards the signal.
 */
export async function serveProcess(context: CommandContext, settings: Record<string, unknown>, role: WorkerRole | undefined): Promise<CommandResult> {
  const mind = await openMind({ ...context, settings })
  const servers: Server[] = []
  let schedule: { stop(): Promise<void> } | undefined
  const draining: Array<{ stop(): Promise<void> }> = []
  let closing: { graceMs: number } | undefined
  try {
    const limits = mind.config.values.serve
    const { host, port, tokens, maintain } = limits
    const configured = parseCredentials(tokens)
    checkBind(host, configured)
    // With no token configured, the dashboard's address carries one made for this run, which a
    // browser exchanges for a session of this server (decision 0051). It is no bearer token and
    // no administrator: it acts as the agent alone, as every request of an open server does.
    const runToken = !configured.open ? undefined : (role?.runToken ?? randomBytes(24).toString('base64url'))
    const credentials = runToken === undefined ? configured : withDashboardToken(configured, runToken, { agent: mind.agent, user: undefined, admin: false })
    const app = createServeApp({ mind, credentials })
    const log = (line: string) => context.io.stderr.write(`${line}\n`)
    // Before listening: a pattern that is not one is a configuration error at start. Of several
    // processes, one runs the schedule (what is due is claimed through the store anyway).
    if (role === undefined || role.maintains) schedule = scheduleMaintenance(mind, maintain, log)
    const inWork = requestsInWorkOf(limits.requestsInWork, mind.config.values.storage.url !== undefined)
    const answer = admitRequests(getRequestListener(app.fetch, { hostname: host }), { requestsInWork: inWork, requestsQueued: limits.requestsQueued }, log)
    const makeServer = (listener: RequestListener) => {
      const server = createServer(serverTimeouts(limits), listener)
      servers.push(server)
      draining.push(drainOnStop(server, log))
      return server
    }
    const mcpElsewhere = role !== undefined && role.slot !== 0
    const server = makeServer(mcpElsewhere ? forwardMcp(answer, role.mcpPort) : answer)
    // Before listen(): no connection can arrive before the limits are on.
    limitConnections(server, limits, log)
    const info = await listenOn(server, host, port).catch((error: NodeJS.ErrnoException) => {
      throw new EngramError({ code: ErrorCode.storageUnavailable, category: 'system', message: `engram serve cannot listen on ${host}:${port}: ${error.message}`, fix: 'choose another port (--port, serve.port) or stop what holds this one', cause: error })
    })
    const address = `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`
    if (role === undefined) {
      context.io.stdout.write(startLine(context.json, { address, agent: mind.agent, runToken, open: credentials.open, workers: 1 }))
    } else {
      // The first of several answers /mcp for all, on a loopback port of its own (forward-mcp.ts).
      const mcpPort = role.slot === 0 ? (await listenOn(makeServer(answer), '127.0.0.1', 0, true)).port : undefined
      role.send({ type: 'listening', slot: role.slot, address, agent: mind.agent, ...(mcpPort !== undefined ? { mcpPort } : {}) })
    }

    const signal = await (role?.stopped ?? untilSignal())
    // No new maintenance run; stop accepting, let the requests in flight finish; then the run in
    // progress and the background work, within the grace (what is still running then goes back
    // to the queue when the mind closes).
    const stopping = schedule?.stop()
    await Promise.all(draining.map((drain) => drain.stop()))
    const deadline = Date.now() + SIGNAL_GRACE_MS
    await Promise.race([stopping, sleep(SIGNAL_GRACE_MS, undefined, { ref: false })])
    closing = { graceMs: Math.max(0, deadline - Date.now()) }
    context.io.stderr.write(`engram serve: ${role === undefined ? '' : `process ${role.slot} `}stopped (${signal})\n`)
    return { data: { served: true, agent: mind.agent, address, ended: signal }, human: '', quiet: true }
  } finally {
    for (const server of servers) if (server.listening) server.close()
    // Stopped by a signal: the run in progress was given its grace above; otherwise it is awaited.
    const running = schedule?.stop()
    if (closing === undefined) await running
    await mind.close(closing)
  }
}

export const serveCommand: Command = {
  path: ['serve'],
  usage: '[--host ADDRESS] [--port N] [--workers N]',
  examples: ['engram serve', 'engram serve --host 0.0.0.0 --port 8787', 'engram serve --workers 4'],
  home: 'creates',
  options: {
    host: { type: 'string', description: 'address to listen on (default serve.host, 127.0.0.1); others need serve.tokens', valueName: 'ADDRESS' },
    port: { type: 'string', description: 'port (default serve.port, 7477; 0 = any free port)', valueName: 'N' },
    workers: { type: 'string', description: 'processes answering (default serve.workers: 0 = one per core, at most 4)', valueName: 'N' },
  },
  async run(context) {
    const settings = { ...context.settings }
    if (typeof context.options.host === 'string') settings['serve.host'] = context.options.host
    if (typeof context.options.port === 'string') settings['serve.port'] = context.options.port
    if (typeof context.options.workers === 'string') settings['serve.workers'] = context.options.workers
    const role = workerRole()
    if (role) return serveProcess(context, settings, role)
    const workers = workerCount(context, settings)
    if (workers <= 1) return serveProcess(context, settings, undefined)
    return runWorkers(context, settings, workers)
  },
}
