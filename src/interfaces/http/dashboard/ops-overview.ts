/**
 * The overview (`/`): what the viewing holds, counted — the whole mind's status for the agent and
 * an administrator (as `GET /v1/status`), a user's own stores for a user — and three pictures:
 * how memory grew by kind (from the `memory_write` events of the activity log), how long recall
 * took before each turn (the stored turns' `provenance.timing`), and what priming recalled most
 * (the stored turns' primed items, with the index's text and access counts).
 */
import { html } from 'hono/html'
import { type CountKey, kindSpec } from '../../../core/memory-kinds.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import { userPageLink } from './browse-support.ts'
import { markdownAsText } from './markdown.ts'
import { countLabel, plural } from './words.ts'
import { barChart, countTicks, dayBars, lineChart, quantile } from './charts.ts'
import type { Html } from './layout.ts'
import { activityOf, DASHBOARD_COUNTED, everyQueue, growthSeries, mostRecalled, ownCounts, timingOf, turnsOf } from './ops-data.ts'
import { userPicker, type Viewing, viewingLabel } from './ops-viewer.ts'

/** The kinds the whole mind's cards show: counted by the dashboard, from `engram status`'s counts. */
const STATUS_AND_DASHBOARD = DASHBOARD_COUNTED.filter(({ kind }) => kindSpec(kind)?.count?.in.includes('status') === true) as ReadonlyArray<{ key: CountKey<'dashboard'> & CountKey<'status'>; label: string }>

function card(testid: string, value: number, label: string): Html {
  return html`<div class="card" data-testid="${testid}"><b>${value}</b>${countLabel(value, label)}</div>`
}

async function countCards(mind: MindInternals, viewing: Viewing): Promise<Html> {
  if (viewing.user !== undefined) {
    const counts = await ownCounts(mind, viewing.user)
    return html`<p class="muted">The memories ${viewing.user} owns (the agent's and shared memory they also read are not counted here).</p><div class="cards" data-testid="counts">
${card('count-rules', counts.rules, 'rules')}${card('count-lessons', counts.lessons, 'lessons')}${card('count-profile', counts.profile, 'profile facts')}${card('count-topics', counts.topics, 'topics')}
${DASHBOARD_COUNTED.map(({ key, label }) => card(`count-${key}`, counts[key], label))}${card('count-activity-days', counts.activityDays, 'activity days')}
${card('count-confirmations', counts.pendingConfirmations, 'confirmations waiting')}
</div>`
  }
  const status = await mind.status()
  const m = status.memory
  const rules = m.global.rules.always + m.global.rules.never + m.global.rules.when + (m.project ? m.project.rules.always + m.project.rules.never + m.project.rules.when : 0)
  const owners = status.owners
  // status counts the agent's own queue (what engram status answers); the whole mind waits on every user's too.
  const queues = await everyQueue(mind, await mind.backend.users())
  const waiting = queues.reduce((sum, queue) => sum + queue.waiting, 0)
  return html`<p class="muted">The whole mind of agent ${mind.agent}: every owner's memories, counted (as <code>engram status</code>).</p><div class="cards" data-testid="counts">
${card('count-units', status.index.units, 'memories indexed')}${card('count-rules', rules, 'agent rules')}${card('count-lessons', m.global.lessons + (m.project?.lessons ?? 0), 'agent lessons')}
${STATUS_AND_DASHBOARD.map(({ key, label }) => card(`count-${key}`, m[key], `agent ${label}`))}
${card('count-conversations', status.context.conversations, 'conversations')}${card('count-messages', status.context.messages, 'messages')}${html`<div class="card" data-testid="count-confirmations"><b>${waiting}</b>${countLabel(waiting, 'confirmations waiting')}, in every queue<div class="muted" data-testid="confirmation-queues">${queues.map((queue) => (queue.user === undefined ? `agent ${queue.waiting}` : `${queue.user} ${queue.waiting}`)).join(' · ')}</div></div>`}
${owners ? card('count-users', owners.users.count, 'users') : ''}
</div>
${
  owners
    ? html`<details data-testid="owners-table"><summary>By owner</summary><table><thead><tr><th scope="col">owner</th><th scope="col">index units</th><th scope="col">files</th></tr></thead><tbody>
<tr data-testid="owner-row"><td>agent</td><td>${owners.agent.units}</td><td>${owners.agent.files}</td></tr>
<tr data-testid="owner-row"><td>shared</td><td>${owners.shared.units}</td><td>${owners.shared.files}</td></tr>
${owners.users.list.map((user) => html`<tr data-testid="owner-row"><td>user <a href="${userPageLink(user.user)}">${user.user}</a></td><td>${user.units}</td><td>${user.files}</td></tr>`)}
</tbody></table></details>`
    : ''
}`
}

/** Links to the user pages this viewing may open: every user's for an administrator, the token's own user's otherwise. */
function userPages(viewing: Viewing): Html {
  const users = viewing.admin ? viewing.users : viewing.user !== undefined ? [viewing.user] : []
  if (users.length === 0) return html``
  return html`<nav aria-label="User pages" data-testid="user-pages"><p>What the agent knows about ${users.length === 1 && !viewing.admin ? 'you' : 'each user'}: ${users.map(
    (user, i) => html`${i > 0 ? ', ' : ''}<a href="${userPageLink(user)}" data-testid="user-page-link">${viewing.admin ? user : `${user}'s page`}</a>`,
  )}.</p></nav>`
}

function ms(value: number): string {
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ms`
}

/** The overview page's body for a viewing. */
export async function overviewBody(mind: MindInternals, viewing: Viewing): Promise<Html> {
  const counts = await countCards(mind, viewing)
  // Pictures show content (paths, recalled texts): the agent alone sees only its own, never a user's.
  const writes = await activityOf(mind, viewing).read({ types: ['memory_write'] })
  const growth = dayBars({
    testid: 'chart-growth',
    title: 'Memory over time, by kind',
    yLabel: 'memories',
    series: growthSeries(writes),
    caption: `from ${plural(writes.length, 'memory write', 'memory writes')} of ${viewing.everyone ? "every owner's activity log" : viewing.user !== undefined ? `the activity logs ${viewing.user}'s sessions read (theirs, the agent's and shared)` : "the agent's activity log"}: an entry saved or a file first written adds one, forgetting takes one away; each day shows how many there were at its end`,
  })

  const turns = await turnsOf(mind, viewing)
  const timed = turns.flatMap((turn) => {
    const timing = timingOf(turn)
    return timing ? [{ at: Date.parse(turn.startedAt), startedAt: turn.startedAt, ...timing }] : []
  })
  timed.sort((a, b) => a.at - b.at)
  const priming = timed.map((turn) => turn.primingMs)
  const p50 = quantile(priming, 0.5)
  const p95 = quantile(priming, 0.95)
  // x is the turn's place among those shown, oldest first: turns a second apart would all read the same minute on a time axis.
  const when = (n: number): string => timed[n - 1]?.startedAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') ?? ''
  const latency = lineChart({
    testid: 'chart-latency',
    title: 'Recall latency per turn',
    xLabel: timed.length > 1 ? `turn, oldest to newest (${when(1)} to ${when(timed.length)} UTC)` : 'turn',
    yLabel: 'milliseconds',
    series: [
      { name: 'priming', points: timed.map((turn, i) => ({ x: i + 1, y: turn.primingMs })) },
      { name: 'whole begin()', points: timed.map((turn, i) => ({ x: i + 1, y: turn.beginMs })) },
    ],
    formatX: (n) => String(n),
    describeX: (n) => `turn ${n} · ${when(n)}`,
    xTicks: countTicks(timed.length),
    formatY: ms,
    dots: true,
    caption: `${timed.length} of the latest ${plural(turns.length, 'turn', 'turns')}${p50 !== undefined ? `; priming p50 ${ms(p50)}, p95 ${ms(p95 ?? p50)}` : ''}${timed.length < turns.length ? '; turns stored before timing was recorded are left out' : ''}`,
  })

  const recalled = await mostRecalled(mind, turns, activityOf(mind, viewing))
  const top = barChart({
    testid: 'chart-recalled',
    title: 'Recalled most',
    categoryLabel: 'memory',
    valueLabel: 'turns it was primed into',
    bars: recalled.map((item) => ({
      // A label is SVG text: the memory's words without their markdown marks ("# Title" reads "Title").
      label: item.text !== undefined ? `${item.kind}: ${markdownAsText(item.text).replace(/\s+/g, ' ').trim()}` : `${item.kind}: ${item.id}`,
      value: item.turns,
      // An activity line's reference (activity/<day>.jsonl#L3) is where it is, not what it says: secondary.
      detail: `${item.kind === 'activity' ? item.id : item.source}${item.accessCount !== undefined ? ` · recalled ${plural(item.accessCount, 'time', 'times')} in all` : ''}`,
    })),
    caption: `over the latest ${plural(turns.length, 'turn', 'turns')}`,
  })

  return html`<p>Showing <b data-testid="viewing">${viewingLabel(viewing)}</b>. ${userPicker(viewing, '/')}</p>
${userPages(viewing)}
${counts}
<h2>Pictures</h2>
<style>.chart { margin: 1rem 0 1.5rem; } .chart figcaption { margin-bottom: .3rem; } .legend { margin: .2rem 0; }</style>
${growth}
${latency}
${top}`
}
