/**
 * The activity timeline (`/activity`): the viewing's activity log, newest first, a page at a time,
 * filtered by kind of event and by day — the same timeline a session of that viewer reads
 * (the memory view's logs), every text escaped.
 */
import { html } from 'hono/html'
import { ACTIVITY_TYPES, type ActivityType, eventContent, isActivityType } from '../../../core/activity.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import type { Html } from './layout.ts'
import { activityOf, activityPage } from './ops-data.ts'
import { userPicker, type Viewing, viewingLabel } from './ops-viewer.ts'

/** Events per page. */
export const ACTIVITY_PAGE_SIZE = 50

/** How much of an event's text a row shows (the log keeps tool results up to 2,000 characters). */
const SHOWN_CHARS = 1_000

export interface ActivityFilter {
  type: ActivityType | undefined
  day: string | undefined
  page: number
}

/** The filter in a request's query; what is not one (an unknown kind, a malformed day) is ignored and said so. */
export function activityFilterOf(query: Record<string, string>): { filter: ActivityFilter; ignored: string[] } {
  const ignored: string[] = []
  let type: ActivityType | undefined
  if (query.type !== undefined && query.type !== '') {
    if (isActivityType(query.type)) type = query.type
    else ignored.push(`kind ${JSON.stringify(query.type)}`)
  }
  let day: string | undefined
  if (query.day !== undefined && query.day !== '') {
    if (/^\d{4}-\d{2}-\d{2}$/.test(query.day)) day = query.day
    else ignored.push(`day ${JSON.stringify(query.day)}`)
  }
  const number = Number(query.page ?? '1')
  const page = Number.isInteger(number) && number >= 1 && number <= 10_000 ? number : 1
  return { filter: { type, day, page }, ignored }
}

function link(viewing: Viewing, filter: ActivityFilter, page: number): string {
  const params = new URLSearchParams()
  if (viewing.admin && viewing.user !== undefined) params.set('user', viewing.user)
  if (filter.type) params.set('type', filter.type)
  if (filter.day) params.set('day', filter.day)
  if (page > 1) params.set('page', String(page))
  const query = params.toString()
  return `/activity${query ? `?${query}` : ''}`
}

/** The activity page's body. */
export async function activityBody(mind: MindInternals, viewing: Viewing, filter: ActivityFilter, ignored: string[]): Promise<Html> {
  const { records, more } = await activityPage(activityOf(mind, viewing), {
    ...(filter.type ? { types: [filter.type] } : {}),
    ...(filter.day ? { day: filter.day } : {}),
    page: filter.page,
    pageSize: ACTIVITY_PAGE_SIZE,
  })
  const form = html`<form method="get" action="/activity" data-testid="activity-filter">
${viewing.admin && viewing.user !== undefined ? html`<input type="hidden" name="user" value="${viewing.user}">` : ''}
<label>Kind <select name="type" data-testid="activity-type"><option value="">every kind</option>${ACTIVITY_TYPES.map((type) => html`<option value="${type}"${type === filter.type ? html` selected` : ''}>${type}</option>`)}</select></label>
<label>Day <input type="text" name="day" placeholder="YYYY-MM-DD" value="${filter.day ?? ''}" data-testid="activity-day"></label>
<button type="submit" class="secondary">Filter</button></form>`
  const rows = records.map((record) => {
    const text = eventContent(record) ?? record.summary ?? ''
    return html`<tr data-testid="activity-row" data-type="${record.type}">
<td class="muted">${record.ts.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')}</td>
<td><span class="pill">${record.type}</span>${record.tool ? html` ${record.tool}` : ''}</td>
<td class="text">${text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text}${record.summary && record.summary !== text ? html`<div class="muted">${record.summary}</div>` : ''}</td>
<td class="muted">${record.session ?? ''}${record.from ? html` from ${record.from}` : ''}</td>
<td class="muted">${record.ref}</td>
</tr>`
  })
  return html`<p>Showing <b data-testid="viewing">${viewingLabel(viewing)}</b>, newest first. ${userPicker(viewing, '/activity')}</p>
${form}
${ignored.length > 0 ? html`<p class="warn" data-testid="activity-ignored">Ignored ${ignored.join(' and ')}: a kind is one of the list, a day is written YYYY-MM-DD.</p>` : ''}
${
  records.length === 0
    ? html`<p class="muted" data-testid="activity-empty">No activity${filter.type ? html` of kind ${filter.type}` : ''}${filter.day ? html` on ${filter.day}` : ''}${filter.page > 1 ? ' on this page' : ''}.</p>`
    : html`<table data-testid="activity-table"><thead><tr><th>when (UTC)</th><th>kind</th><th>what</th><th>session</th><th>where it is stored</th></tr></thead><tbody>${rows}</tbody></table>`
}
<nav data-testid="activity-pages">${filter.page > 1 ? html`<a href="${link(viewing, filter, filter.page - 1)}" data-testid="activity-newer">← newer</a> ` : ''}<span class="muted">page ${filter.page}</span>${more ? html` <a href="${link(viewing, filter, filter.page + 1)}" data-testid="activity-older">older →</a>` : ''}</nav>`
}
