/**
 * `engram mcp`: serve this agent's memory to an MCP client over stdio — the agent tools, the
 * memory files as resources, and the `primed_context` prompt — for one user (`--user`) or the
 * agent alone. The mind stays open until the
 * client closes stdin (or SIGINT / SIGTERM), then closes cleanly.
 *
 * Nothing but protocol goes to stdout while serving; the CLI's closing envelope is sent to stderr
 * (see below), and logs always go there — the first line names the home served, and says when it
 * is new and empty (decision 0067). The tools listed follow `mcp.tools` (mcp-tools.ts).
 */
import { readdirSync } from 'node:fs'
import { resolveConfig } from '../../../../config/resolve.ts'
import { describeError } from '../../../../core/errors.ts'
import { checkDerivedSessionId, derivedSessionId } from '../../../../core/session-ids.ts'
import { createMindMcpServer } from '../../../mcp/mind-server.ts'
import { serveStdio } from '../../../mcp/stdio.ts'
import type { Command } from '../../command.ts'
import { openMind } from '../../open-mind.ts'

const MAINTAIN_EVERY_MS = 5 * 60_000
/**
 * The first run comes soon after the start, off the connection's first exchanges: a server
 * started after another was killed finishes that one's turn (decision 0045) now, not five minutes on.
 */
const FIRST_MAINTAIN_MS = 1_000
/**
 * After SIGINT / SIGTERM, how long the background work (the last turn's learning) may run before
 * it is handed back to the queue. MCP clients wait 2 s after SIGTERM before SIGKILL (the SDK's
 * stdio transport): this, the stores' closing (bounded at half of it again) and the CLI's exit
 * grace stay under that.
 */
const SIGNAL_GRACE_MS = 1_000

/**
 * Whether the home the command will open holds nothing yet (opening creates it): memory kept in
 * files, and no such folder or an empty one. A configuration the mind will refuse reads as not new.
 */
function newEmptyHome(env: Record<string, string | undefined>, settings: Record<string, unknown>): boolean {
  let values: ReturnType<typeof resolveConfig>['values']
  try {
    values = resolveConfig({ env, flags: settings }).values
  } catch {
    return false
  }
  if (values.storage.url !== undefined) return false
  try {
    return readdirSync(values.home).length === 0
  } catch {
    return true
  }
}

export const mcpCommand: Command = {
  path: ['mcp'],
  usage: '[--user ID] [--session ID] [--admin]',
  examples: ['engram mcp', 'engram mcp --user ada --session chat-42'],
  home: 'creates',
  options: {
    session: { type: 'string', description: 'conversation the memory tool works on (default "mcp", or "mcp:<user>" with --user)', valueName: 'ID' },
    admin: { type: 'boolean', description: 'an administrator\'s connection: primed_context may name any user' },
  },
  async run(context) {
    // The connection acts for one (agent, user), fixed here (decision 0017).
    const user = typeof context.options.user === 'string' && context.options.user !== '' ? context.options.user : undefined
    const sessionId = typeof context.options.session === 'string' ? context.options.session : derivedSessionId('mcp', user)
    // --session naming an id derived for another user (mcp:<user>, http:<user>) is refused before serving (decision 0054).
    checkDerivedSessionId(sessionId, user)
    const admin = context.options.admin === true
    const fresh = newEmptyHome(context.io.env, context.settings)
    const mind = await openMind(context)
    // An MCP client starts the server with an environment of its own: a home exported in a shell
    // does not reach it. Which memory this is goes to stderr, which clients show in their logs.
    context.io.stderr.write(
      fresh
        ? `engram mcp: new empty home at ${mind.layout.home} (agent ${mind.agent}); if you meant another, set ENGRAM_HOME in your client's config ("env") or pass --home\n`
        : `engram mcp: serving agent ${mind.agent} from ${mind.layout.home}${user !== undefined ? ` for user ${user}` : ''}\n`,
    )
    let ended: string | undefined
    // A long-lived server is where background work becomes due (idle session boundaries, daily
    // compaction): it runs every few minutes, off the protocol, without keeping the process alive.
    let maintaining: Promise<unknown> = Promise.resolve()
    const maintain = (): void => {
      maintaining = maintaining.then(() => mind.maintain()).catch((error) => context.io.stderr.write(`engram mcp: maintenance failed: ${describeError(error)}\n`))
    }
    const first = setTimeout(maintain, FIRST_MAINTAIN_MS)
    const timer = setInterval(maintain, MAINTAIN_EVERY_MS)
    first.unref()
    timer.unref()
    try {
      const server = createMindMcpServer(mind, { session: { sessionId, ...(user !== undefined ? { user } : {}) }, admin })
      ended = await serveStdio(server, { stdin: context.io.stdin ?? process.stdin, stdout: process.stdout, stderr: process.stderr }, { signals: true })
    } finally {
      clearTimeout(first)
      clearInterval(timer)
      // The last turn's work is queued by now (the server's close ends it). Asked to stop: close
      // within a short grace, not after whatever background work is running (a compaction waiting
      // on a model). The client gone: finish that work here, unless a signal comes meanwhile (an
      // MCP client sends SIGTERM to a server still running 2 s after it closed stdin). Either way
      // what is still running when the wait is cut is handed back to the queue, so a later
      // maintain runs it at once rather than after its lease.
      const stop = new AbortController()
      const onSignal = (): void => stop.abort()
      if (ended === 'signal') stop.abort()
      else {
        process.once('SIGINT', onSignal)
        process.once('SIGTERM', onSignal)
      }
      // Already aborted (a signal ended the session): an 'abort' listener added now would never be called.
      const aborted = stop.signal.aborted ? Promise.resolve() : new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }))
      try {
        await Promise.race([maintaining, aborted])
        const closing = mind.close(ended === 'signal' ? { graceMs: SIGNAL_GRACE_MS } : { signal: stop.signal }).catch((error) => context.io.stderr.write(`engram mcp: closing failed: ${describeError(error)}\n`))
        // Bounded as a whole once stopped: the stores' own closing must not keep a stopped server waiting.
        await Promise.race([closing, aborted.then(() => new Promise((resolve) => setTimeout(resolve, 1.5 * SIGNAL_GRACE_MS).unref()))])
      } finally {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      }
    }
    // The client may still be reading stdout until this process exits, and anything that is not
    // JSON-RPC there is a protocol error on its side: the end of the session is told on stderr.
    context.io.stderr.write(`engram mcp: session ended (${ended ?? 'error'})\n`)
    return { data: { served: true, agent: mind.agent, ended }, human: '', quiet: true }
  },
}
