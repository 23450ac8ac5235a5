/**
 * The dashboard of `engram serve` (issue 17): pages for the person who runs the agent, rendered on
 * the server from the mind, every memory text escaped (memories are untrusted text). An
 * administrator sees every user; a user's token sees that user's own memories.
 */
import { Hono } from 'hono'
import { html } from 'hono/html'
import type { Mind } from '../../../mind.ts'
import type { ServeEnv } from '../support.ts'

export interface DashboardOptions {
  mind: Mind
}

/** The dashboard's pages, mounted at `/` by `createServeApp`. */
export function createDashboard(options: DashboardOptions): Hono<ServeEnv> {
  const { mind } = options
  const app = new Hono<ServeEnv>()
  app.get('/', async (c) => {
    const principal = c.get('principal')
    const status = await mind.status()
    const who = principal.admin ? 'administrator' : principal.user === undefined ? 'the agent alone' : `user ${principal.user}`
    return c.html(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>engram · ${mind.agent}</title></head>
<body><h1>engram · ${mind.agent}</h1><p>Viewing as ${who}.</p>
<ul><li>${status.index.units} memories indexed</li><li>${status.context.conversations} conversations, ${status.context.messages} messages</li><li>${status.pendingConfirmations} confirmations waiting</li></ul>
</body></html>`)
  })
  return app
}
