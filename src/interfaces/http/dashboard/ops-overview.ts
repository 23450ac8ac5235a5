/**
 * The overview (`/`): what the viewing holds, counted — the whole mind's status for the agent and
 * an administrator (as `GET /v1/status`), a user's own stores for a user — and three pictures:
 * how memory grew by kind (from the `memory_write` events of the activity log), how long recall
 * took before each turn (the stored turns' `provenance.timing`), and what priming recalled most
 * (the stored turns' primed items, with the index's text and access counts).
 */
import { html } from 'hono/html'
import type { Mind } from '../../../mind.ts'
import { barChart, dayOf, lineChart, quantile } from './charts.ts'
import type { Html } from './layout.ts'
import { activityOf, growthSeries, mostRecalled, ownCounts, timingOf, turnsOf } from './ops-data.ts'
import { userPicker, type Viewing, viewingLabel } from './ops-viewer.ts'

function card(testid: string, value: number | string, label: string): Html {
  return html`<div class="card" data-testid="${testid}"><b>${value}</b>${label}</div>`
}

async function countCards(mind: Mind, viewing: Viewing): Promise<Html> {
  if (viewing.user !== undefined) {
    const counts = await ownCounts(mind, viewing.user)
    return html`<p class="muted">The memories ${viewing.user} owns (the agent's and shared memory they also read are not counted here).</p><div class="cards" data-testid="counts">
${card('count-rules', counts.rules, 'rules')}${card('count-lessons', counts.lessons, 'lessons')}${card('count-profile', counts.profile, 'profile facts')}${card('count-topics', counts.topics, 'topics')}
${card('count-knowledge', counts.knowledge, 'knowledge')}${card('count-procedures', counts.procedures, 'procedures')}${card('count-episodes', counts.episodes, 'episode days')}${card('count-activity-days', counts.activityDays, 'activity days')}
${card('count-confirmations', counts.pendingConfirmations, 'confirmations waiting')}
</div>`
  }
  const status = await mind.status()
  const m = status.memory
  const rules = m.global.rules.always + m.global.rules.never + m.global.rules.when + (m.project ? m.project.rules.always + m.project.rules.never + m.project.rules.when : 0)
  const owners = status.owners
  return html`<p class="muted">The whole mind of agent ${mind.agent}: every owner's memories, counted (as engram status).</p><div class="cards" data-testid="counts">
${card('count-units', status.index.units, 'memories indexed')}${card('count-rules', rules, 'agent rules')}${card('count-lessons', m.global.lessons + (m.project?.lessons ?? 0), 'agent lessons')}
${card('count-knowledge', m.knowledge, 'agent knowledge')}${card('count-procedures', m.procedures, 'agent procedures')}${card('count-episodes', m.episodes, 'agent episode days')}
${card('count-conversations', status.context.conversations, 'conversations')}${card('count-messages', status.context.messages, 'messages')}${card('count-confirmations', status.pendingConfirmations, 'confirmations waiting')}
${owners ? card('count-users', owners.users.count, 'users') : ''}
</div>
${
  owners
    ? html`<details data-testid="owners-table"><summary>By owner</summary><table><thead><tr><th>owner</th><th>index units</th><th>files</th></tr></thead><tbody>
<tr data-testid="owner-row"><td>agent</td><td>${owners.agent.units}</td><td>${owners.agent.files}</td></tr>
<tr data-testid="owner-row"><td>shared</td><td>${owners.shared.units}</td><td>${owners.shared.files}</td></tr>
${owners.users.list.map((user) => html`<tr data-testid="owner-row"><td>user ${user.user}</td><td>${user.units}</td><td>${user.files}</td></tr>`)}
</tbody></table></details>`
    : ''
}`
}

function ms(value: number): string {
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ms`
}

/** The overview page's body for a viewing. */
export async function overviewBody(mind: Mind, viewing: Viewing): Promise<Html> {
  const counts = await countCards(mind, viewing)
  // Pictures show content (paths, recalled texts): the agent alone sees only its own, never a user's.
  const writes = await activityOf(mind, viewing).read({ types: ['memory_write'] })
  const growth = lineChart({
    testid: 'chart-growth',
    title: 'Memory over time, by kind',
    xLabel: 'day',
    yLabel: 'memories',
    series: growthSeries(writes),
    formatX: dayOf,
    caption: `from ${writes.length} memory writes of the activity log: an entry saved or a file first written adds one, forgetting takes one away`,
  })

  const turns = await turnsOf(mind, viewing)
  const timed = turns.flatMap((turn) => {
    const timing = timingOf(turn)
    return timing ? [{ at: Date.parse(turn.startedAt), ...timing }] : []
  })
  timed.sort((a, b) => a.at - b.at)
  const priming = timed.map((turn) => turn.primingMs)
  const p50 = quantile(priming, 0.5)
  const p95 = quantile(priming, 0.95)
  const latency = lineChart({
    testid: 'chart-latency',
    title: 'Recall latency per turn',
    xLabel: 'turn started',
    yLabel: 'milliseconds',
    series: [
      { name: 'priming', points: timed.map((turn) => ({ x: turn.at, y: turn.primingMs })) },
      { name: 'whole begin()', points: timed.map((turn) => ({ x: turn.at, y: turn.beginMs })) },
    ],
    formatX: (x) => new Date(x).toISOString().slice(0, 16).replace('T', ' '),
    formatY: ms,
    dots: true,
    caption: `${timed.length} of the latest ${turns.length} turns${p50 !== undefined ? `; priming p50 ${ms(p50)}, p95 ${ms(p95 ?? p50)}` : ''}${timed.length < turns.length ? '; turns stored before timing was recorded are left out' : ''}`,
  })

  const recalled = await mostRecalled(mind, turns)
  const top = barChart({
    testid: 'chart-recalled',
    title: 'Recalled most',
    categoryLabel: 'memory',
    valueLabel: 'turns it was primed into',
    bars: recalled.map((item) => ({
      label: item.text !== undefined ? `${item.kind}: ${item.text}` : `${item.kind}: ${item.id}`,
      value: item.turns,
      detail: `${item.source}${item.accessCount !== undefined ? ` · recalled ${item.accessCount} times in all` : ''}`,
    })),
    caption: `over the latest ${turns.length} turns`,
  })

  return html`<p>Showing <b data-testid="viewing">${viewingLabel(viewing)}</b>. ${userPicker(viewing, '/')}</p>
${counts}
<h2>Pictures</h2>
<style>.chart { margin: 1rem 0 1.5rem; } .chart figcaption { margin-bottom: .3rem; } .legend { margin: .2rem 0; }</style>
${growth}
${latency}
${top}`
}
