/**
 * `engram serve`: the HTTP API over this agent's memory (issue 17, decision 0038) on serve.host :
 * serve.port, loopback by default. The due background work runs on a timer; on SIGINT / SIGTERM
 * the server stops accepting, waits for the requests in flight, closes the mind and returns 0.
 *
 * One line goes to stdout when it listens (`{"listening": "http://127.0.0.1:7477"}` or the text),
 * so a script or a test learns the port chosen for `--port 0`; logs go to stderr.
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { createServeApp } from '../../../http/app.ts'
import { checkBind, parseCredentials, withAdminToken } from '../../../http/credentials.ts'
import type { Command } from '../../command.ts'
import { openMind } from '../../open-mind.ts'

const MAINTAIN_EVERY_MS = 5 * 60_000

export const serveCommand: Command = {
  path: ['serve'],
  summary: 'Serve this agent\'s memory over HTTP (begin/end turns, memorize, search, status), loopback by default',
  usage: 'serve [--host ADDRESS] [--port N]',
  options: {
    host: { type: 'string', description: 'address to listen on (default serve.host, 127.0.0.1); others need serve.tokens', valueName: 'ADDRESS' },
    port: { type: 'string', description: 'port (default serve.port, 7477; 0 = any free port)', valueName: 'N' },
  },
  async run(context) {
    const settings = { ...context.settings }
    if (typeof context.options.host === 'string') settings['serve.host'] = context.options.host
    if (typeof context.options.port === 'string') settings['serve.port'] = context.options.port
    const mind = await openMind({ ...context, settings })
    let server: ReturnType<typeof serve> | undefined
    let timer: NodeJS.Timeout | undefined
    let maintaining: Promise<unknown> = Promise.resolve()
    try {
      const { host, port, tokens } = mind.config.values.serve
      const configured = parseCredentials(tokens)
      checkBind(host, configured)
      // With no token configured, the dashboard's address carries one made for this run: the
      // person who started the server sees every user's memory, other callers the agent alone.
      const runToken = configured.open ? randomBytes(24).toString('base64url') : undefined
      const credentials = runToken === undefined ? configured : withAdminToken(configured, runToken)
      const app = createServeApp({ mind, credentials })
      const info = await new Promise<AddressInfo>((resolve, reject) => {
        server = serve({ fetch: app.fetch, hostname: host, port }, resolve)
        server.once('error', reject)
      }).catch((error: NodeJS.ErrnoException) => {
        throw new EngramError({ code: ErrorCode.storageUnavailable, category: 'system', message: `engram serve cannot listen on ${host}:${port}: ${error.message}`, fix: 'choose another port (--port, serve.port) or stop what holds this one', cause: error })
      })
      const address = `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`
      const dashboard = runToken === undefined ? `${address}/` : `${address}/?token=${runToken}`
      context.io.stdout.write(
        context.json
          ? `${JSON.stringify({ listening: address, agent: mind.agent, dashboard })}\n`
          : `engram serve: agent ${mind.agent} at ${address}${credentials.open ? ' (loopback, no tokens: a request without one acts as the agent alone)' : ''}\n` +
              `dashboard: ${dashboard}${runToken === undefined ? ' (open it with ?token=<an administrator\'s or a user\'s token>)' : ' (this address acts as an administrator until the server stops)'}\n`,
      )

      timer = setInterval(() => {
        maintaining = maintaining.then(() => mind.maintain()).catch((error) => context.io.stderr.write(`engram serve: maintenance failed: ${String(error)}\n`))
      }, MAINTAIN_EVERY_MS)
      timer.unref()

      const signal = await new Promise<NodeJS.Signals>((resolve) => {
        const stop = (name: NodeJS.Signals) => {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
          resolve(name)
        }
        process.on('SIGINT', stop)
        process.on('SIGTERM', stop)
      })
      clearInterval(timer)
      // Stop accepting, let the requests in flight finish (idle keep-alive connections are closed).
      const running = server
      if (running) await new Promise<void>((resolve) => {
        running.close(() => resolve())
        if ('closeIdleConnections' in running) running.closeIdleConnections()
      })
      await maintaining
      context.io.stderr.write(`engram serve: stopped (${signal})\n`)
      return { data: { served: true, agent: mind.agent, address, ended: signal }, human: '', quiet: true }
    } finally {
      if (timer) clearInterval(timer)
      if (server?.listening) server.close()
      await maintaining.catch(() => {})
      await mind.close()
    }
  },
}
