/**
 * The dashboard of `engram serve` (decision 0038): pages for the person who runs the agent, rendered on
 * the server from the mind, every memory text escaped (memories are untrusted text) and no inline
 * script allowed to run (CSP). An administrator sees every user; a user's token sees that user's
 * own memories; on an open loopback server without a token, the agent's own.
 */
import { Hono } from 'hono'
import type { MindInternals } from '../../../mind-internals.ts'
import type { ServeEnv } from '../support.ts'
import { DASHBOARD_JS } from './assets.ts'
import { registerBrowsePages } from './browse.ts'
import { registerEditPages } from './edit-pages.ts'
import { registerEditWrites } from './edit-writes.ts'
import { DASHBOARD_CSP } from './layout.ts'
import { registerOperationsPages } from './operations.ts'

export interface DashboardOptions {
  mind: MindInternals
}

/** The dashboard's pages, mounted at `/` by `createServeApp`. */
export function createDashboard(options: DashboardOptions): Hono<ServeEnv> {
  const { mind } = options
  const app = new Hono<ServeEnv>()
  app.use('*', async (c, next) => {
    await next()
    c.header('Content-Security-Policy', DASHBOARD_CSP)
    c.header('X-Content-Type-Options', 'nosniff')
    c.header('Referrer-Policy', 'no-referrer')
  })
  app.get('/assets/dashboard.js', (c) => c.body(DASHBOARD_JS, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }))
  registerOperationsPages(app, mind)
  registerBrowsePages(app, mind)
  registerEditPages(app, mind)
  registerEditWrites(app, mind)
  return app
}
