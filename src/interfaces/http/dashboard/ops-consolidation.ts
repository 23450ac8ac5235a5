/**
 * Consolidation runs (`/consolidation`): daily, weekly and monthly, newest first — when each ran,
 * how it ended and what it changed. The runs are the lifecycle's consolidation jobs (their counts
 * are of every owner: shown to the agent and administrators only); what changed is what each run
 * recorded in the viewing's own activity logs (the documents it wrote, merged, superseded or
 * forgot, with the reason), so a user sees the changes to their own memory and no one else's.
 */
import { html } from 'hono/html'
import type { Mind } from '../../../mind.ts'
import type { Html } from './layout.ts'
import { activityOf, type ConsolidationRunView, consolidationRuns } from './ops-data.ts'
import { userPicker, type Viewing, viewingLabel } from './ops-viewer.ts'

/** The counts a job records, in words, in the order a person reads them. */
const COUNT_LABELS: ReadonlyArray<readonly [string, string]> = [
  ['learned', 'learned'],
  ['distilled', 'distilled'],
  ['reconsolidated', 'reconsolidated'],
  ['merged', 'merged'],
  ['compressed', 'compressed'],
  ['contradictions', 'contradictions'],
  ['rejected', 'rejected'],
  ['forgotten', 'forgotten'],
  ['versionsMoved', 'versions moved'],
  ['lowActivity', 'low-activity'],
  ['migrated', 'migrated'],
  ['sections', 'episode sections'],
  ['protected', 'protected'],
  ['active', 'active'],
  ['calls', 'model calls'],
  ['tokens', 'model tokens'],
]

function countsLine(counts: Record<string, unknown> | undefined): string {
  if (!counts) return ''
  const parts = COUNT_LABELS.flatMap(([key, label]) => (typeof counts[key] === 'number' && counts[key] !== 0 ? [`${label} ${counts[key]}`] : []))
  if (typeof counts.model === 'string') parts.push(`model ${counts.model}`)
  return parts.join(', ')
}

function runRow(run: ConsolidationRunView, showCounts: boolean): Html {
  const pending = showCounts && Array.isArray(run.counts?.pending) ? (run.counts.pending as unknown[]).map(String) : []
  return html`<tr data-testid="consolidation-run" data-period="${run.period}" data-status="${run.status}">
<td class="muted">${run.at.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')}</td>
<td><span class="pill">${run.period}</span>${run.scheduled ? '' : html` <span class="muted">(engram consolidate)</span>`}</td>
<td>${run.status}${run.reason ? html`<div class="muted">${run.reason}</div>` : ''}</td>
<td>${showCounts ? countsLine(run.counts) : ''}${pending.map((line) => html`<div class="muted">pending: ${line}</div>`)}
${
  run.changes.length === 0
    ? html`<div class="muted">${showCounts ? '' : 'nothing of this memory changed'}</div>`
    : html`<details${run.changes.length <= 5 ? html` open` : ''}><summary>${run.changes.length} change${run.changes.length === 1 ? '' : 's'} to ${showCounts ? 'memory' : 'this memory'}</summary><ul>${run.changes.map(
        (change) => html`<li data-testid="consolidation-change"><b>${change.action}</b> <code>${change.path}</code>${change.reason ? html` — <span class="text">${change.reason}</span>` : ''}</li>`,
      )}</ul></details>`
}</td>
</tr>`
}

/** The consolidation page's body. */
export async function consolidationBody(mind: Mind, viewing: Viewing): Promise<Html> {
  const runs = await consolidationRuns(mind, activityOf(mind, viewing))
  // A job's counts add up every owner's memories: the agent's and an administrator's to read.
  const showCounts = viewing.user === undefined || viewing.admin
  return html`<p>Showing <b data-testid="viewing">${viewingLabel(viewing)}</b>. ${userPicker(viewing, '/consolidation')}</p>
<p class="muted">Daily: what the episodes teach (with a model), low-activity marks. Weekly: duplicates merged, old episodes compressed, patterns distilled, contradictions resolved. Monthly: knowledge and procedures that stopped mattering forgotten (restorable from the archive).${showCounts ? '' : ' Each run is listed with the changes it made to your memory; its totals are of every user and are not shown here.'}</p>
${
  runs.length === 0
    ? html`<p class="muted" data-testid="consolidation-empty">No consolidation has run yet. It runs at the first maintenance of each day, week and month (engram serve runs maintenance on its schedule), or now with engram consolidate daily|weekly|monthly.</p>`
    : html`<table data-testid="consolidation-table"><thead><tr><th>when (UTC)</th><th>run</th><th>outcome</th><th>what changed</th></tr></thead><tbody>${runs.map((run) => runRow(run, showCounts))}</tbody></table>`
}`
}
