/**
 * "Why did the agent know that?": `/why` shows what priming would inject for a message, as a
 * session of that user would get it (the primer's own result: each item with its source, kind,
 * score and score terms, and each channel's budget); `/turns/:session/:turn` shows the same for a
 * past turn from its stored provenance (`mind.turnProvenance`).
 */
import type { Hono } from 'hono'
import { html } from 'hono/html'
import { canSee } from '../../../core/owner.ts'
import type { MessageType } from '../../../memory/priming/classify.ts'
import type { DegradedNote, InjectedMemory } from '../../../memory/priming/prime.ts'
import { PRIMING_CHANNELS, type PrimingChannel } from '../../../memory/priming/settings.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import type { StoredTurn } from '../../../session/turn.ts'
import type { ServeEnv } from '../support.ts'
import { excerpt, guarded, userPageLink, memoryPath, notFoundError, userPicker, userQuery, type Viewing, viewingOf, when } from './browse-support.ts'
import { type Html, page } from './layout.ts'
import { cutKeepingLines, markdown } from './markdown.ts'
import { activityLines } from './ops-data.ts'
import { plural, reasonWithTerms } from './words.ts'

const CHANNEL_LABEL: Record<PrimingChannel, string> = {
  profile: 'the sender\'s profile',
  activity: 'recent activity',
  related: 'related memories',
  skills: 'skills and procedures',
}

/** Each channel's share of `budget` for a message of `type` (the primer's own settings) and what its items used. */
function channelBudgets(mind: MindInternals, type: MessageType, budget: number, injected: readonly InjectedMemory[]): Html {
  const shares = mind.primer.settings.shares[type]
  return html`<table data-testid="channel-budgets"><thead><tr><th scope="col">channel</th><th scope="col">used</th><th scope="col">limit</th><th scope="col"><span class="visually-hidden">note</span></th></tr></thead><tbody>${PRIMING_CHANNELS.map((channel) => {
    const used = injected.filter((item) => item.channel === channel).reduce((sum, item) => sum + item.tokens, 0)
    const limit = Math.floor(budget * shares[channel])
    return html`<tr data-testid="channel-budget" data-channel="${channel}"><td>${channel} <span class="muted">(${CHANNEL_LABEL[channel]})</span></td><td data-testid="channel-used">${used}</td><td data-testid="channel-limit">${limit}</td><td class="muted">${channel === 'related' ? 'plus whatever the other channels leave' : ''}</td></tr>`
  })}</tbody></table>`
}

/** Where an injected memory came from: its file page, its conversation, or the source as text. */
function sourceCell(mind: MindInternals, viewing: Viewing, item: InjectedMemory): Html {
  const conversation = /^conv:(\d+)/.exec(item.source)
  const anchor = /^msg:(\d+)/.exec(item.id)
  if (conversation) return html`<a href="/conversations/${conversation[1]}${anchor ? `#msg-${anchor[1]}` : ''}">conversation ${conversation[1]}</a>`
  const path = memoryPath(mind, viewing, item.source)
  if (path === undefined) return html`${item.source}`
  return html`<a href="/memories/file?path=${encodeURIComponent(path)}${userQuery(viewing)}" data-testid="provenance-source">${path}</a>`
}

/** How much of an activity line's text is shown. */
const ACTIVITY_TEXT_CHARS = 300

/**
 * The text of the injected memories, by id: a unit of the index (the viewer's to see) its text; an
 * activity item what its lines say, read from the view's own timeline (a reference tells a reader nothing).
 */
async function unitTexts(mind: MindInternals, viewing: Viewing, injected: readonly InjectedMemory[]): Promise<Map<string, string>> {
  const units = await mind.backend.index.get(injected.map((item) => item.id))
  const texts = new Map(units.filter((unit) => canSee(viewing.viewer, unit)).map((unit) => [unit.id, unit.text]))
  const activity = injected.filter((item) => item.kind === 'activity' && !texts.has(item.id))
  if (activity.length === 0) return texts
  const lines = await activityLines(
    mind.scope(viewing.user).view.activity,
    activity.flatMap((item) => item.provenance),
  )
  for (const item of activity) {
    const said = item.provenance.flatMap((ref) => lines.get(ref) ?? []).join(' / ')
    if (said !== '') texts.set(item.id, excerpt(said, ACTIVITY_TEXT_CHARS))
  }
  return texts
}

/**
 * How many items of a channel are listed before the rest fold away: a long conversation brings
 * dozens of messages to the related channel at one low score, and recent activity a line per event.
 */
const SHOWN_ITEMS: Record<PrimingChannel, number> = { profile: 15, related: 15, skills: 10, activity: 5 }

/**
 * The injected items as a table, best first within their channel (the primer's order: by score,
 * activity by recency): each channel's first few in the open, every other one (scored lower, or
 * older) in a `<details>` beneath with its count, so a long list stays readable and nothing is out of reach.
 */
function injectedTable(mind: MindInternals, viewing: Viewing, injected: readonly InjectedMemory[], texts: ReadonlyMap<string, string>): Html {
  if (injected.length === 0) {
    return html`<p data-testid="empty">Nothing was injected: the memory holds nothing related to this message that this view may see. Memories come from memorize, memory files and past conversations; try words a memory contains.</p>`
  }
  const placed = new Map<PrimingChannel, number>()
  const shown: InjectedMemory[] = []
  const folded: InjectedMemory[] = []
  for (const item of injected) {
    const n = placed.get(item.channel) ?? 0
    placed.set(item.channel, n + 1)
    ;(n < (SHOWN_ITEMS[item.channel] ?? 15) ? shown : folded).push(item)
  }
  const foldedBy = PRIMING_CHANNELS.flatMap((channel) => {
    const count = folded.filter((item) => item.channel === channel).length
    return count === 0 ? [] : [`${count} ${channel === 'activity' ? 'older activity' : `lower scored ${channel}`}`]
  })
  const head = html`<thead><tr><th scope="col">channel</th><th scope="col">kind</th><th scope="col">memory and source</th><th scope="col">score</th><th scope="col">why it was recalled</th><th scope="col">tokens</th></tr></thead>`
  const rows = (items: readonly InjectedMemory[]): Html[] =>
    items.map(
      (item) => html`<tr data-testid="provenance-item" data-channel="${item.channel}" data-kind="${item.kind}">
<td>${item.channel}</td><td><span class="pill">${item.kind}</span></td><td>${texts.has(item.id) ? html`<div class="text" data-testid="provenance-text">${markdown(cutKeepingLines(texts.get(item.id) ?? '', 300))}</div>` : ''}${sourceCell(mind, viewing, item)} <span class="muted">${item.id}</span></td>
<td data-testid="provenance-score">${typeof item.why.score === 'number' ? item.why.score.toFixed(3) : ''}</td><td data-testid="provenance-why">${reasonWithTerms(item.why)}</td><td>${item.tokens}</td></tr>`,
    )
  return html`<p class="muted" data-testid="provenance-count">${injected.length} item${injected.length === 1 ? '' : 's'} injected${folded.length > 0 ? `; the first ${shown.length} of their channels are listed, the other ${folded.length} below` : ''}.</p>
<table data-testid="provenance">${head}<tbody>${rows(shown)}</tbody></table>${
    folded.length > 0
      ? html`<details data-testid="provenance-more"><summary>${folded.length} more, lower scored or older (${foldedBy.join(', ')})</summary><table data-testid="provenance-folded">${head}<tbody>${rows(folded)}</tbody></table></details>`
      : ''
  }`
}

/**
 * Degraded recall said once above the items it concerns (episodes summarised without a model),
 * each reason with how many of the items it touches — never repeated on each row.
 */
function degradedNotice(notes: readonly DegradedNote[]): Html {
  if (notes.length === 0) return html``
  return html`${notes.map((note) => html`<p class="warn" data-testid="degraded-notice">${plural(note.memories.length, 'recalled memory is', 'recalled memories are')} degraded: ${note.reason}.</p>`)}`
}

function memorySections(sections: ReadonlyArray<{ name: string; tokens: number; entries: number; truncated: boolean }>): Html {
  if (sections.length === 0) return html`<p class="muted">No memory context (identity, rules, lessons) yet.</p>`
  return html`<table data-testid="memory-sections"><thead><tr><th scope="col">section</th><th scope="col">entries</th><th scope="col">tokens</th><th scope="col"><span class="visually-hidden">note</span></th></tr></thead><tbody>${sections.map(
    (section) => html`<tr data-testid="memory-section"><td>${section.name}</td><td>${section.entries}</td><td>${section.tokens}</td><td class="warn">${section.truncated ? 'cut to its budget' : ''}</td></tr>`,
  )}</tbody></table>`
}

export function registerWhyPages(app: Hono<ServeEnv>, mind: MindInternals): void {
  app.get(
    '/why',
    guarded(mind, '/why', async (c) => {
      const viewing = viewingOf(c, mind)
      const message = c.req.query('message') ?? ''
      const form = html`<form method="get" action="/why" data-testid="why-form">
<p><textarea name="message" aria-label="A message a user might send" placeholder="a message a user might send, e.g. What did we decide about the billing export?" data-testid="why-message">${message}</textarea></p>
${await userPicker(mind, viewing)} <button type="submit">Show what would be recalled</button>
</form>`
      const intro = html`<p class="muted">Before every turn engram recalls what matters for the message (priming) and puts it in the system prompt, within a budget set by the kind of message. Type a message to see what would be injected for it in a session of this view, from where, and why (the score and its terms). Past turns show the same from what was stored with them: open one from its conversation.</p>`
      if (message.trim() === '') return c.html(page({ title: 'Why did the agent know that?', agent: mind.agent, principal: viewing.principal, active: '/why', body: html`${intro}${form}` }))
      // As a session of that user primes (session.begin): its viewer, its activity and procedures; the profile is the memory context's.
      // A person inspecting is not the agent recalling: nothing is counted as an access.
      const scope = mind.scope(viewing.user)
      const [primed, context] = await Promise.all([
        mind.primer.prime({ message, viewer: scope.viewer, activity: scope.view.activity, procedures: scope.procedures, skipProfile: true, inspect: true }),
        scope.memory.buildContext(),
      ])
      const result = html`<section data-testid="why-result">
<p>Classified as a <b data-testid="message-type">${primed.type}</b>: priming budget <b data-testid="priming-budget">${primed.budget}</b> tokens, <b data-testid="priming-tokens">${primed.tokens}</b> used (${Math.round(primed.ms)} ms).</p>
<h3>Budget of each channel</h3>${channelBudgets(mind, primed.type, primed.budget, primed.injected)}
<h3>What would be injected</h3>${degradedNotice(primed.degraded)}${injectedTable(mind, viewing, primed.injected, await unitTexts(mind, viewing, primed.injected))}
${primed.warnings.length > 0 ? html`<h3>Warnings</h3><ul>${primed.warnings.map((warning) => html`<li class="warn">${warning}</li>`)}</ul>` : ''}
${primed.text !== '' ? html`<details><summary>The injected text, as the model reads it</summary><pre data-testid="primed-text">${primed.text}</pre></details>` : ''}
<h3>Always in the prompt: the memory context</h3>
<p class="muted">Identity, rules and lessons reach every turn of this view whatever the message, within their own budgets.</p>
${memorySections(context.sections)}
</section>`
      return c.html(page({ title: 'Why did the agent know that?', agent: mind.agent, principal: viewing.principal, active: '/why', body: html`${intro}${form}${result}` }))
    }),
  )

  app.get(
    '/turns/:session/:turn',
    guarded(mind, '/conversations', async (c) => {
      const principal = c.get('principal')
      const sessionId = c.req.param('session') ?? ''
      const turnParam = c.req.param('turn') ?? ''
      const number = /^\d+$/.test(turnParam) ? Number(turnParam) : Number.NaN
      const missing = notFoundError(`Session ${JSON.stringify(sessionId)} has no turn ${turnParam} of yours.`, 'open a turn from its conversation on the Conversations page')
      if (!Number.isInteger(number) || number < 1) throw missing
      const stored: StoredTurn | null = await mind.turnProvenance({ sessionId, turn: number })
      // Another user's turn is answered as one that does not exist (as on the API).
      if (!stored || (!principal.admin && stored.user !== principal.user)) throw missing
      const viewing: Viewing = { principal, user: stored.user, viewer: mind.scope(stored.user).viewer }
      const conversation = await mind.backend.context.findConversation(sessionId, mind.agent)
      const messages = await mind.backend.context.messagesById([stored.messageId, ...stored.replyIds])
      const opened = messages.find((message) => message.id === stored.messageId)
      const replies = messages.filter((message) => message.id !== stored.messageId)
      const provenance = stored.provenance
      const budget = mind.primer.settings.budgets[stored.type]
      const turnSummaries = provenance.conversation.filter((item) => item.kind === 'summary')
      const fallbackSummaries = turnSummaries.filter((item) => item.degraded).length
      const body = html`<p class="muted">What turn ${stored.number} of ${conversation ? html`<a href="/conversations/${conversation.id}">${sessionId}</a>` : sessionId}${stored.user !== undefined ? html` (with <a href="${userPageLink(stored.user)}" data-testid="user-link">${stored.user}</a>)` : ''} was given, as stored when it began (${when(stored.startedAt)}).</p>
<h3>The message</h3>
<div data-testid="message" class="text">${opened ? markdown(opened.content) : '(the message is no longer stored)'}</div>
${replies.length > 0 ? html`<h3>The reply</h3>${replies.map((reply) => html`<div data-testid="message" class="text"><span class="pill">${reply.role}</span> ${markdown(cutKeepingLines(reply.content, 2000))}</div>`)}` : html`<p class="muted">The turn has not ended (no reply stored).</p>`}
<h3>Recalled for it (priming)</h3>
<p>Classified as a <b data-testid="message-type">${stored.type}</b>: priming budget <b data-testid="priming-budget">${budget}</b> tokens.</p>
${channelBudgets(mind, stored.type, budget, provenance.primed)}
${degradedNotice(provenance.degraded ?? [])}
${injectedTable(mind, viewing, provenance.primed, await unitTexts(mind, viewing, provenance.primed))}
<h3>The memory context</h3>${memorySections(provenance.memory)}
${
  provenance.state.length > 0
    ? html`<h3>Working state</h3><ul>${provenance.state.map((section) => html`<li data-testid="state-section">${section.name}: ${plural(section.entries, 'entry', 'entries')}, ${plural(section.tokens, 'token', 'tokens')}, from ${section.source}</li>`)}</ul>`
    : ''
}
<h3>The conversation it saw</h3>
<p class="muted">${plural(provenance.conversation.length, 'item', 'items')}: ${plural(turnSummaries.length, 'summary', 'summaries')} and ${plural(provenance.conversation.length - turnSummaries.length, 'message', 'messages')}.</p>
${
  fallbackSummaries > 0
    ? html`<p class="warn" data-testid="degraded-notice">${fallbackSummaries === turnSummaries.length ? (turnSummaries.length === 1 ? 'This summary was' : 'These summaries were') : `${fallbackSummaries} of these summaries were`} written by a fallback, not a model (no model was reachable when the conversation was compacted).</p>`
    : ''
}
<ul>${turnSummaries.map(
        (item) =>
          html`<li data-testid="turn-summary">${conversation ? html`<a href="/conversations/${conversation.id}#${item.summaryId ?? ''}">summary ${item.summaryId}</a>` : item.summaryId} — stands for ${plural(item.messageIds.length, 'message', 'messages')}${item.degraded && fallbackSummaries < turnSummaries.length ? ' (fallback)' : ''}</li>`,
      )}</ul>
<p class="muted">Prompt layers: ${Object.entries(provenance.layers)
        .map(([key, value]) => `${key}: ${value}`)
        .join(' · ')}</p>`
      return c.html(page({ title: `Why: turn ${stored.number} of ${sessionId}`, agent: mind.agent, principal, active: '/conversations', body }))
    }),
  )
}
