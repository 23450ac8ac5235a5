/**
 * The archive (`/archive`): what was forgotten (on request, or by monthly forgetting) and what
 * weekly consolidation merged away, of the owners the viewing may restore — a user's own, the
 * agent's and shared memory for the agent, every owner for an administrator with no user picked —
 * each with a Restore button that posts to `/v1/restore` what `engram restore` takes.
 */
import { html } from 'hono/html'
import { userOfOwner } from '../../../core/owner.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import { memoryIdOf } from '../../../tools/memories.ts'
import { userPageLink, when } from './browse-support.ts'
import type { Html } from './layout.ts'
import { cutKeepingLines, markdown } from './markdown.ts'
import { type ArchivedMemory, archivedMemories } from './ops-data.ts'
import { userPicker, type Viewing, viewingLabel } from './ops-viewer.ts'

function ownerCell(item: ArchivedMemory): Html | string {
  const user = userOfOwner(item.owner)
  return user !== undefined ? html`user <a href="${userPageLink(user)}">${user}</a>` : item.owner
}

/** The `/v1/restore` body for an item: its target, and its user when an administrator restores a user's memory. */
export function restoreBody(item: ArchivedMemory, viewing: Viewing): string {
  const user = userOfOwner(item.owner)
  return JSON.stringify({ target: item.target, ...(viewing.admin && user !== undefined ? { user } : {}) })
}

/**
 * The Restore button of an item: an entry (rule, lesson, profile fact) through the dashboard's own
 * restore, which then shows what changed with its undo (decision 0071); a file as `engram restore`.
 */
function restoreButton(item: ArchivedMemory, viewing: Viewing): Html {
  if (item.what !== 'rule' && item.what !== 'lesson' && item.what !== 'profile fact') {
    return html`<button data-post="/v1/restore" data-body="${restoreBody(item, viewing)}" data-testid="restore-button" aria-label="Restore ${item.what} ${item.target}">Restore</button>`
  }
  const user = userOfOwner(item.owner)
  const body = JSON.stringify({ id: memoryIdOf(item.target), ...(viewing.admin && user !== undefined ? { user } : {}) })
  return html`<button data-post="/edit/restore" data-body="${body}" data-testid="restore-button" aria-label="Restore ${item.what} ${item.target}">Restore</button>`
}

/** The archive page's body. */
export async function archiveBody(mind: MindInternals, viewing: Viewing): Promise<Html> {
  const items = await archivedMemories(mind, viewing)
  return html`<p>Showing <b data-testid="viewing">${viewingLabel(viewing)}</b>. ${userPicker(viewing, '/archive')}</p>
<p class="muted">Forgotten memories are out of search and the prompt, kept here until restored (or purged with <code>engram forget --purge</code>).</p>
${
  items.length === 0
    ? html`<p class="muted" data-testid="archive-empty">Nothing forgotten or merged.</p>`
    : html`<table data-testid="archive-table"><thead><tr><th scope="col">what</th><th scope="col">memory</th><th scope="col">whose</th><th scope="col">when and why</th><th scope="col"><span class="visually-hidden">action</span></th></tr></thead><tbody>${items.map(
        (item) => html`<tr data-testid="archive-row" data-target="${item.target}">
<td><span class="pill">${item.what}</span></td>
<td><div class="text" data-testid="archive-text">${markdown(cutKeepingLines(item.text, 600))}</div><div class="muted"><code>${item.target}</code></div></td>
<td class="nowrap">${ownerCell(item)}</td>
<td>${item.why} <span data-testid="archive-when">${item.forgottenAt ? when(item.forgottenAt) : html`<span class="muted">(date not recorded)</span>`}</span>${item.reason ? html`<div data-testid="archive-reason">${item.reason}</div>` : ''}</td>
<td>${restoreButton(item, viewing)}</td>
</tr>`,
      )}</tbody></table>`
}`
}
