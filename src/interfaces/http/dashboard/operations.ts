/**
 * The dashboard's pages for what happens to memory: the overview with its pictures (growth by
 * kind, recall latency, most recalled), the activity timeline, consolidation runs and what each
 * changed, the archive with restore, and the confirmations queue. Each shows the viewing's own
 * memory (ops-viewer.ts): a user's token never another user's.
 */
import type { Hono } from 'hono'
import type { MindInternals } from '../../../mind-internals.ts'
import type { ServeEnv } from '../support.ts'
import { type Html, page } from './layout.ts'
import { activityBody, activityFilterOf } from './ops-activity.ts'
import { archiveBody } from './ops-archive.ts'
import { confirmationsBody } from './ops-confirmations.ts'
import { consolidationBody } from './ops-consolidation.ts'
import { overviewBody } from './ops-overview.ts'
import { type Viewing, withViewing } from './ops-viewer.ts'

export function registerOperationsPages(app: Hono<ServeEnv>, mind: MindInternals): void {
  const show = (path: string, title: string, body: (viewing: Viewing, query: Record<string, string>) => Promise<Html>) =>
    app.get(path, (c) => withViewing(c, mind, title, path, async (viewing) => c.html(page({ title, agent: mind.agent, principal: c.get('principal'), active: path, body: await body(viewing, c.req.query()) }))))

  show('/', 'Overview', (viewing) => overviewBody(mind, viewing))
  show('/activity', 'Activity', (viewing, query) => {
    const { filter, ignored } = activityFilterOf(query)
    return activityBody(mind, viewing, filter, ignored)
  })
  show('/consolidation', 'Consolidation', (viewing) => consolidationBody(mind, viewing))
  show('/archive', 'Archive', (viewing) => archiveBody(mind, viewing))
  show('/confirmations', 'Confirmations', (viewing) => confirmationsBody(mind, viewing))
}
