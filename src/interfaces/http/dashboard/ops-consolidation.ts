/**
 * Consolidation runs (`/consolidation`): daily, weekly and monthly, newest first — when each ran,
 * how it ended and what it changed. The runs are the lifecycle's consolidation jobs (their counts
 * are of every owner: shown to the agent and administrators only); what changed is what each run
 * recorded in the viewing's own activity logs (the documents it wrote, merged, superseded or
 * forgot, with the reason), so a user sees the changes to their own memory and no one else's.
 */
import { html } from 'hono/html'
import type { MindInternals } from '../../../mind-internals.ts'
import type { Html } from './layout.ts'
import { activityOf, type ConsolidationRunView, consolidationRuns } from './ops-data.ts'
import { userPicker, type Viewing, viewingLabel } from './ops-viewer.ts'
import { plural } from './words.ts'


/**
 * The counts a job records, each said as a person reads it (a bare "active 2" tells nothing):
 * first what the run changed, then what it only looked at, the model's cost last.
 */
const CHANGE_WORDS: ReadonlyArray<readonly [string, (n: number) => string]> = [
  ['learned', (n) => `${plural(n, 'piece', 'pieces')} of knowledge learned from the episodes`],
  ['distilled', (n) => `${plural(n, 'pattern', 'patterns')} distilled into knowledge or procedures`],
  ['reconsolidated', (n) => `${plural(n, 'memory', 'memories')} updated with what was learned since (reconsolidated)`],
  ['contradictions', (n) => `${plural(n, 'contradiction', 'contradictions')} resolved (the older fact superseded)`],
  ['merged', (n) => `${plural(n, 'duplicate', 'duplicates')} merged into one memory`],
  ['compressed', (n) => `${plural(n, 'old episode day', 'old episode days')} compressed (the full text kept in the archive)`],
  ['forgotten', (n) => `${plural(n, 'memory file', 'memory files')} forgotten: unused too long, moved to the archive (restorable)`],
  ['versionsMoved', (n) => `${plural(n, 'old procedure version', 'old procedure versions')} moved to the archive`],
  ['migrated', (n) => `${plural(n, 'file', 'files')} written before engram tracked them given their missing details`],
  ['lowActivity', (n) => `${plural(n, 'memory file', 'memory files')} low-activity: forgotten later unless used before then`],
  ['marked', (n) => `${plural(n, 'memory file', 'memory files')} newly marked low-activity in ${n === 1 ? 'its' : 'their'} frontmatter`],
  ['cleared', (n) => `${plural(n, 'memory file', 'memory files')} used again: the low-activity mark taken off`],
]

const REVIEW_WORDS: ReadonlyArray<readonly [string, (n: number) => string]> = [
  ['active', (n) => `${plural(n, 'memory file', 'memory files')} still in use: kept as ${n === 1 ? 'it is' : 'they are'}`],
  ['protected', (n) => `${plural(n, 'memory file', 'memory files')} never forgotten (marked protected or [IMPORTANT], or a mature procedure)`],
  ['failed', (n) => `${plural(n, 'memory file', 'memory files')} could not be moved (left as ${n === 1 ? 'it was' : 'they were'})`],
  ['rejected', (n) => `${plural(n, 'candidate', 'candidates')} not learned: the episodes did not support ${n === 1 ? 'it' : 'them'}`],
  ['sections', (n) => `${plural(n, 'episode section', 'episode sections')} read`],
]

const COST_WORDS: ReadonlyArray<readonly [string, (n: number) => string]> = [
  ['calls', (n) => plural(n, 'model call', 'model calls')],
  ['tokens', (n) => plural(n, 'token', 'tokens')],
]

function said(counts: Record<string, unknown>, words: ReadonlyArray<readonly [string, (n: number) => string]>): string[] {
  return words.flatMap(([key, say]) => {
    const value = counts[key]
    return typeof value === 'number' && value !== 0 ? [say(value)] : []
  })
}

/** A job's counts in words: what it changed, and what it looked at and left as it was. */
function countLines(counts: Record<string, unknown> | undefined): Html {
  if (!counts) return html``
  const changed = said(counts, CHANGE_WORDS)
  const reviewed = said(counts, REVIEW_WORDS)
  const cost = said(counts, COST_WORDS)
  return html`<div data-testid="run-counts">${
    changed.length > 0 ? html`<ul class="plain">${changed.map((line) => html`<li>${line}</li>`)}</ul>` : html`<div>nothing changed</div>`
  }${reviewed.length > 0 ? html`<div class="muted">Looked at and left as it was:</div><ul class="plain muted">${reviewed.map((line) => html`<li>${line}</li>`)}</ul>` : ''}${
    cost.length > 0 || typeof counts.model === 'string' ? html`<div class="muted">Model: ${[typeof counts.model === 'string' ? counts.model : '', ...cost].filter(Boolean).join(', ')}</div>` : ''
  }</div>`
}

function runRow(run: ConsolidationRunView, showCounts: boolean): Html {
  const pending = showCounts && Array.isArray(run.counts?.pending) ? (run.counts.pending as unknown[]).map(String) : []
  return html`<tr data-testid="consolidation-run" data-period="${run.period}" data-status="${run.status}">
<td class="muted">${run.at.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')}</td>
<td><span class="pill">${run.period}</span>${run.scheduled ? '' : html` <span class="muted">(<code>engram consolidate</code>)</span>`}</td>
<td>${run.status}${run.reason ? html`<div class="muted">${run.reason}</div>` : ''}</td>
<td>${showCounts ? countLines(run.counts) : ''}${pending.map((line) => html`<div class="muted">pending: ${line}</div>`)}
${
  run.changes.length === 0
    ? html`<div class="muted">${showCounts ? '' : 'nothing of this memory changed'}</div>`
    : html`<details${run.changes.length <= 5 ? html` open` : ''}><summary>${plural(run.changes.length, 'change', 'changes')} to ${showCounts ? 'memory' : 'this memory'}</summary><ul>${run.changes.map(
        (change) => html`<li data-testid="consolidation-change"><b>${change.action}</b> <code>${change.path}</code>${change.reason ? html` — <span class="text">${change.reason}</span>` : ''}</li>`,
      )}</ul></details>`
}</td>
</tr>`
}

/** The consolidation page's body. */
export async function consolidationBody(mind: MindInternals, viewing: Viewing): Promise<Html> {
  const runs = await consolidationRuns(mind, activityOf(mind, viewing))
  // A job's counts add up every owner's memories: the agent's and an administrator's to read.
  const showCounts = viewing.user === undefined || viewing.admin
  return html`<p>Showing <b data-testid="viewing">${viewingLabel(viewing)}</b>. ${userPicker(viewing, '/consolidation')}</p>
<p class="muted">Daily: what the episodes teach (with a model), low-activity marks. Weekly: duplicates merged, old episodes compressed, patterns distilled, contradictions resolved. Monthly: knowledge and procedures that stopped mattering forgotten (restorable from the archive).</p>
<p class="muted" data-testid="consolidation-listed">Listed: every run of the schedule (maintenance, or <code>engram consolidate monthly</code>), whether it changed anything or not, and the changes a run of <code>engram consolidate daily</code> or <code>weekly</code> made; those two run outside the schedule and record nothing when they change nothing, so such a run is not listed.${showCounts ? '' : ' Each run is listed with the changes it made to your memory; its totals are of every user and are not shown here.'}</p>
${
  runs.length === 0
    ? html`<p class="muted" data-testid="consolidation-empty">No consolidation run is recorded yet. Consolidation runs at the first maintenance of each day, week and month (engram serve runs maintenance on its schedule).</p>`
    : html`<table data-testid="consolidation-table"><thead><tr><th>when (UTC)</th><th>run</th><th>outcome</th><th>what changed</th></tr></thead><tbody>${runs.map((run) => runRow(run, showCounts))}</tbody></table>`
}`
}
