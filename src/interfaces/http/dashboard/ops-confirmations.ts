/**
 * The confirmations queue (`/confirmations`): what the encoding gate holds for a yes or no
 * (copilot mode) — a user's own queue, the agent's own without a user — with Accept and Reject
 * buttons posting to `/v1/confirmations/{id}/accept|reject` (as `engram confirm`). An
 * administrator answers a user's queue by picking the user (the body then names them).
 */
import { html } from 'hono/html'
import { isRuleKind, ruleWithPolarity } from '../../../core/engram.ts'
import type { Mind } from '../../../mind.ts'
import type { PendingConfirmation } from '../../../storage/contracts.ts'
import type { Html } from './layout.ts'
import { userPicker, type Viewing } from './ops-viewer.ts'

/** How much of a memory file waiting to be written is shown. */
const SHOWN_CHARS = 1_500

function what(item: PendingConfirmation): Html {
  if (item.engram) {
    const { engram } = item
    const text = isRuleKind(engram.kind) ? ruleWithPolarity(engram.kind, engram.text) : engram.text
    return html`<span class="pill">${engram.kind}</span> <span class="pill">${engram.scope}</span> <span class="pill">${engram.owner ?? 'agent'}</span><div class="text" data-testid="confirmation-text">${text}</div>`
  }
  const document = item.document
  if (!document) return html`<span class="muted">(nothing to show)</span>`
  const content = document.content.length > SHOWN_CHARS ? `${document.content.slice(0, SHOWN_CHARS)}…` : document.content
  return html`<span class="pill">file</span> <span class="pill">${document.owner}</span> ${document.mode} <code>${document.path}</code><pre data-testid="confirmation-text">${content}</pre>`
}

/** The confirmations page's body. */
export async function confirmationsBody(mind: Mind, viewing: Viewing): Promise<Html> {
  const pending = await mind.pendingConfirmations(viewing.user !== undefined ? { user: viewing.user } : {})
  const body = JSON.stringify(viewing.admin && viewing.user !== undefined ? { user: viewing.user } : {})
  const whose = viewing.user !== undefined ? `${viewing.user}'s queue` : "the agent's own queue (sessions without a user)"
  return html`<p>Showing <b data-testid="viewing">${whose}</b>. ${userPicker(viewing, '/confirmations')}</p>
<p class="muted">Memories the encoding gate holds until someone says yes (copilot mode). Accept saves one; reject drops it.</p>
${
  pending.length === 0
    ? html`<p class="muted" data-testid="confirmations-empty">Nothing waits for confirmation.</p>`
    : html`<table data-testid="confirmations-table"><thead><tr><th>memory</th><th>why it waits</th><th>asked</th><th></th></tr></thead><tbody>${pending.map(
        (item) => html`<tr data-testid="confirmation-row" data-id="${item.id}">
<td>${what(item)}</td>
<td class="muted">${item.reason}</td>
<td class="muted">${item.queuedAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')}${item.askedBy ? html`<div>by ${item.askedBy}</div>` : ''}</td>
<td><button data-post="/v1/confirmations/${encodeURIComponent(item.id)}/accept" data-body="${body}" data-testid="accept-button">Accept</button>
<button class="secondary" data-post="/v1/confirmations/${encodeURIComponent(item.id)}/reject" data-body="${body}" data-testid="reject-button">Reject</button></td>
</tr>`,
      )}</tbody></table>`
}`
}
