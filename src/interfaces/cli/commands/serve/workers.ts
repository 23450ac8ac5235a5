/**
 * `engram serve` on several processes (`serve.workers`, decision 0089). A serve process answers on
 * one CPU-bound thread (~90 answers a second per core), so the command's first process forks
 * `serve.workers` processes with node:cluster, which share the one listening port (the first
 * process accepts and hands connections round the processes) and each open the same home or
 * database: several processes on one home are safe (they were before: two servers on one home),
 * and the queued background work is claimed through the store.
 *
 * The first process serves nothing itself. It prints the start-up line once, when every process
 * listens; starts another in the place of a process that dies (logged); and on SIGTERM / SIGINT
 * tells every process to stop — each drains its requests as one server does — and exits 0 when
 * all did. A process that dies before it ever listened is a failure to start: the others are
 * stopped and the command fails with its code (no restart loop on a port in use).
 *
 * What one process kept for itself and the others now share: the dashboard's token of the run,
 * made here and given to each (a browser session is a MAC under a key derived from it, checked in
 * any process, decision 0051); MCP over HTTP, answered by process 0 for all (forward-mcp.ts); the
 * maintenance schedule, run by the last process, so that a long run (minutes on a big home, 0084)
 * holds neither MCP nor more than one process's share of the API.
 */
import cluster, { type Worker } from 'node:cluster'
import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { resolveConfig } from '../../../../config/resolve.ts'
import { checkBind, parseCredentials } from '../../../http/credentials.ts'
import type { CommandContext, CommandResult } from '../../command.ts'
import { ExitCode } from '../../io.ts'

/** The environment a forked process learns its place from (set by the first process only). */
const SLOT_ENV = 'ENGRAM_SERVE_WORKER_SLOT'
const RUN_TOKEN_ENV = 'ENGRAM_SERVE_RUN_TOKEN'
const MAINTAINS_ENV = 'ENGRAM_SERVE_WORKER_MAINTAINS'

/** What a process of several (`serve.workers` > 1) is told by the first process that forked it (workers.ts). */
export interface WorkerRole {
  /** 0 for the process that answers /mcp; 1… for the others. */
  slot: number
  /** Whether this process runs the maintenance schedule (the last one). */
  maintains: boolean
  /** The dashboard token of this run, made once by the first process so that a browser session works on every process. */
  runToken: string | undefined
  /** Tells the first process (over the cluster's channel). */
  send(message: WorkerMessage): void
  /** The loopback port where slot 0 answers /mcp (undefined until it listens). */
  mcpPort(): number | undefined
  /** Resolves when the first process says stop (it forwards SIGTERM / SIGINT), or when it is gone. */
  stopped: Promise<NodeJS.Signals>
}

/** What a worker tells the first process: it listens (its address, its agent, and for slot 0 its /mcp port). */
export interface WorkerMessage {
  type: 'listening'
  slot: number
  address: string
  agent: string
  mcpPort?: number
}

/** The start-up line: the address, the dashboard's, and on a server without tokens what that means. */
export function startLine(json: boolean, started: { address: string; agent: string; runToken: string | undefined; open: boolean; workers: number }): string {
  const { address, agent, runToken, open: isOpen } = started
  const dashboard = runToken === undefined ? `${address}/` : `${address}/?token=${runToken}`
  // Without tokens the server acts as the agent alone for every request: both start-up lines say so.
  const open = 'loopback, no tokens: a request without one acts as the agent alone'
  return json
    ? `${JSON.stringify({ listening: address, agent, dashboard, tokens: isOpen ? 'none' : 'configured', workers: started.workers, ...(isOpen ? { note: `${open}; set serve.tokens (ENGRAM_SERVE_TOKENS) to tell users apart` } : {}) })}\n`
    : `engram serve: agent ${agent} at ${address}${started.workers > 1 ? ` (${started.workers} processes)` : ''}${isOpen ? ` (${open})` : ''}\n` +
        `dashboard: ${dashboard}${runToken === undefined ? " (open it with ?token=<an administrator's or a user's token>)" : " (the agent's own memory; to see every user's, set serve.tokens with an administrator's token and open the dashboard with it)"}\n`
}

/** Until SIGINT or SIGTERM . */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise<NodeJS.Signals>((resolve) => {
    const stop = (name: NodeJS.Signals) => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve(name)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}

/** What the first process tells a worker. */
type PrimaryMessage = { type: 'stop' } | { type: 'mcp-port'; port: number }

/**
 * Processes the default gives at most: each opens the home or database and holds its own mind (a few
 * hundred MB on a large home), so one per core of a 64-core host would cost gigabytes a person did
 * not ask for. More is one setting away (decision 0089, amended).
 */
const DEFAULT_WORKERS_AT_MOST = 4

/** How many times a process other than the first is started again when it ends before it listens. */
const STARTS_AGAIN = 2

/** How many processes serve.workers asks for (0: one per core this process may use, at most DEFAULT_WORKERS_AT_MOST). */
export function workerCount(context: CommandContext, settings: Record<string, unknown>): number {
  const configured = resolveConfig({ env: context.io.env, flags: settings }).values.serve.workers
  return configured === 0 ? Math.min(availableParallelism(), DEFAULT_WORKERS_AT_MOST) : configured
}

/** This process's role when the first process of `engram serve` forked it; undefined otherwise. */
export function workerRole(): WorkerRole | undefined {
  const slot = process.env[SLOT_ENV]
  if (!cluster.isWorker || slot === undefined) return undefined
  let mcpPort: number | undefined
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    process.on('message', (message: PrimaryMessage) => {
      if (message.type === 'mcp-port') mcpPort = message.port
      if (message.type === 'stop') resolve('SIGTERM')
    })
    // The first process forwards the signal; a terminal's Ctrl-C reaches every process of the group, and is its to act on.
    process.on('SIGINT', () => {})
    process.on('SIGTERM', () => resolve('SIGTERM'))
    // The first process is gone (killed): stop as on a signal, rather than serve on unsupervised.
    process.on('disconnect', () => resolve('SIGTERM'))
  })
  return {
    slot: Number(slot),
    runToken: process.env[RUN_TOKEN_ENV] || undefined,
    maintains: process.env[MAINTAINS_ENV] === '1',
    send: (message) => process.send?.(message),
    mcpPort: () => mcpPort,
    stopped,
  }
}

/** The first process: forks `workers` processes, keeps them running, prints the start-up line, stops them on a signal. */
export async function runWorkers(context: CommandContext, settings: Record<string, unknown>, workers: number): Promise<CommandResult> {
  const log = (line: string) => context.io.stderr.write(`${line}\n`)
  const serve = resolveConfig({ env: context.io.env, flags: settings }).values.serve
  // What would stop every process at start is said once, here.
  const credentials = parseCredentials(serve.tokens)
  checkBind(serve.host, credentials)
  const runToken = credentials.open ? randomBytes(24).toString('base64url') : undefined

  const bySlot = new Map<number, Worker>()
  const startsAgain = new Map<number, number>()
  const listened = new Set<number>()
  let mcpPort: number | undefined
  let first: WorkerMessage | undefined
  let stopping = false
  let failedCode: number | undefined
  let announce: () => void = () => {}
  const announced = new Promise<void>((resolve) => {
    announce = resolve
  })
  let allExited: () => void = () => {}
  const exited = new Promise<void>((resolve) => {
    allExited = resolve
  })

  const tell = (worker: Worker, message: PrimaryMessage) => {
    try {
      if (worker.isConnected()) worker.send(message)
    } catch {
      // It is exiting; its exit is handled below.
    }
  }
  const stopAll = () => {
    stopping = true
    for (const worker of bySlot.values()) tell(worker, { type: 'stop' })
  }

  const fork = (slot: number): void => {
    const worker = cluster.fork({ [SLOT_ENV]: String(slot), [RUN_TOKEN_ENV]: runToken ?? '', [MAINTAINS_ENV]: slot === workers - 1 ? '1' : '0' })
    bySlot.set(slot, worker)
    let listening = false
    worker.on('message', (message: WorkerMessage) => {
      if (message.type !== 'listening') return
      listening = true
      listened.add(slot)
      if (message.mcpPort !== undefined) {
        mcpPort = message.mcpPort
        for (const other of bySlot.values()) tell(other, { type: 'mcp-port', port: message.mcpPort })
      } else if (mcpPort !== undefined) tell(worker, { type: 'mcp-port', port: mcpPort })
      if (slot === 0) first = message
      if (slot === 0 && !othersForked && !stopping) {
        othersForked = true
        for (let other = 1; other < workers; other++) fork(other)
      }
      if (listened.size === workers) announce()
      if (stopping) tell(worker, { type: 'stop' })
    })
    worker.once('exit', (code, signal) => {
      if (bySlot.get(slot) === worker) bySlot.delete(slot)
      if (slot === 0) mcpPort = undefined
      // Killed, or ended by a failure of the machine or of engram (not by a setting or input that was
      // wrong, which would end it the same way again): a process other than the first is started
      // again, twice at most — the first one listening shows the home and the port good (decision 0089).
      const passing = code === null || code === ExitCode.system || code === ExitCode.internal
      if (!stopping && !listening && slot !== 0 && passing && (startsAgain.get(slot) ?? 0) < STARTS_AGAIN) {
        startsAgain.set(slot, (startsAgain.get(slot) ?? 0) + 1)
        log(`engram serve: process ${slot} (pid ${worker.process.pid}) ended before it listened (${signal ?? `code ${code}`}); starting another in its place`)
        fork(slot)
      } else if (!stopping && !listening) {
        // It never served: a failure to start (its reason is on stderr, when it had time to write it). No restart loop.
        log(`engram serve: process ${slot} (pid ${worker.process.pid}) ended before it listened (${signal ?? `code ${code}`}); stopping the others`)
        failedCode = code ?? ExitCode.system
        stopAll()
      } else if (!stopping) {
        log(`engram serve: process ${slot} (pid ${worker.process.pid}) ended (${signal ?? `code ${code}`}); starting another in its place`)
        fork(slot)
      } else if (code !== 0 && failedCode === undefined) failedCode = code ?? ExitCode.system
      if (bySlot.size === 0 && stopping) allExited()
    })
  }

  const signals = untilSignal()
  // The others start once the first listens: it alone creates and migrates a new home or schema,
  // which processes opening it at the same moment would race for (on a loaded machine one of them
  // gave up waiting for the store's lock and the whole server failed to start).
  let othersForked = false
  fork(0)

  const started = await Promise.race([announced.then(() => true), exited.then(() => false), signals.then(() => false)])
  if (started && first) context.io.stdout.write(startLine(context.json, { address: first.address, agent: first.agent, runToken, open: credentials.open, workers }))
  const signal = started ? await Promise.race([signals, exited.then(() => undefined)]) : undefined
  if (!stopping) stopAll()
  if (bySlot.size > 0) await exited
  if (failedCode !== undefined) return { data: { served: listened.size > 0, failed: failedCode }, human: '', quiet: true, exitCode: failedCode }
  context.io.stderr.write(`engram serve: stopped (${signal ?? 'SIGTERM'}, ${workers} processes)\n`)
  return { data: { served: true, agent: first?.agent, address: first?.address, ended: signal }, human: '', quiet: true }
}
