/**
 * `/conversations`: the conversations the viewer may see (decision 0017's reader rule), with their
 * message counts and dates; `/conversations/:id`: one conversation as its context window holds it —
 * the summary DAG (summaries over summaries over messages) as nested `<details>`, open down to the
 * original messages, and its turns, each linking to what it was given and why.
 */
import type { Hono } from 'hono'
import { html } from 'hono/html'
import type { StoredMessage, Summary } from '../../../core/message.ts'
import { isDegradedMethod } from '../../../memory/context/render.ts'
import { loadItems } from '../../../memory/context/dag.ts'
import { type ConversationReader, readerSees } from '../../../memory/context/provider.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import type { Conversation } from '../../../storage/contracts.ts'
import type { ServeEnv } from '../support.ts'
import { excerpt, guarded, notFoundError, userPageLink, userPicker, userQuery, type Viewing, viewingOf, when } from './browse-support.ts'
import { type Html, page } from './layout.ts'
import { markdown } from './markdown.ts'
import { plural } from './words.ts'

/** Nodes (summaries and messages) drawn on one page at most; the rest is one `engram context expand` away. */
export const DAG_NODES = 5000
/** Conversations listed at most, newest first. */
const CONVERSATIONS_LISTED = 500

/**
 * Whose conversations a view reaches: an administrator without a user every conversation of the
 * agent (the operator's view, as the CLI's); anyone else the viewer's own and the agent's without a user.
 */
function readerOf(mind: MindInternals, viewing: Viewing): ConversationReader {
  return viewing.principal.admin && viewing.user === undefined ? mind.agent : viewing.viewer
}

/** Whether the principal may open a turn of `user` (its own only; an administrator any). */
function opensTurnOf(viewing: Viewing, user: string | undefined): boolean {
  return viewing.principal.admin || user === viewing.principal.user
}

async function visibleConversations(mind: MindInternals, viewing: Viewing): Promise<Conversation[]> {
  const reader = readerOf(mind, viewing)
  return (await mind.backend.context.listConversations(mind.agent)).filter((conversation) => readerSees(reader, conversation))
}

function messageBlock(message: StoredMessage, turnOf: Map<number, number>, sessionId: string, viewing: Viewing, user: string | undefined): Html {
  const turn = turnOf.get(message.id)
  return html`<div class="message" id="msg-${message.id}" data-testid="message" data-message-id="${message.id}" data-role="${message.role}">
<span class="pill">#${message.seq} ${message.name ?? message.role}</span> <span class="muted">${when(message.at)}</span>${
    turn !== undefined && opensTurnOf(viewing, user) ? html` · <a href="/turns/${encodeURIComponent(sessionId)}/${turn}" data-testid="turn-link">turn ${turn}: what it was given, and why</a>` : ''
  }
<div class="text">${markdown(message.content)}</div></div>`
}

interface DagContext {
  mind: MindInternals
  sessionId: string
  user: string | undefined
  viewing: Viewing
  turnOf: Map<number, number>
  /** Nodes still to draw. */
  left: number
}

/** A summary and, nested inside it, what it folds: summaries (recursively) and messages, oldest first. */
async function summaryNode(summary: Summary, dag: DagContext): Promise<Html> {
  dag.left--
  const store = dag.mind.backend.context
  const children = await store.summaryChildren(summary.id)
  const summaries = (await store.summariesById(children.summaryIds)).sort((a, b) => a.earliestAt.localeCompare(b.earliestAt))
  const messages = (await store.messagesById(children.messageIds)).sort((a, b) => a.seq - b.seq)
  const inner: Html[] = []
  for (const child of summaries) {
    if (dag.left <= 0) break
    inner.push(await summaryNode(child, dag))
  }
  for (const message of messages) {
    if (dag.left <= 0) break
    dag.left--
    inner.push(messageBlock(message, dag.turnOf, dag.sessionId, dag.viewing, dag.user))
  }
  const cut = inner.length < summaries.length + messages.length
  const degraded = isDegradedMethod(summary.method)
  return html`<details id="${summary.id}" data-testid="dag-node" data-summary-id="${summary.id}" data-depth="${summary.depth}" data-kind="${summary.kind}">
<summary><span class="pill">${summary.kind} · depth ${summary.depth}</span> ${when(summary.earliestAt)} → ${when(summary.latestAt)} · folds ${summaries.length > 0 ? plural(summaries.length, 'summary', 'summaries') : plural(messages.length, 'message', 'messages')} · ${plural(summary.tokenCount, 'token', 'tokens')} for ${summary.sourceTokenCount}${
    // Written by a fallback: said once above the tree (degradedSummaries), only marked here.
    degraded ? html` <span class="warn">(${summary.method}, fallback)</span>` : html` <span class="muted">(${summary.method})</span>`
  }</summary>
<div class="text summary-text" data-testid="summary-text">${markdown(summary.content)}</div>
${inner}${cut ? html`<p class="muted">… more below this summary: <code>engram context expand ${summary.id} --messages</code> shows all of it.</p>` : ''}
</details>`
}

export function registerConversationPages(app: Hono<ServeEnv>, mind: MindInternals): void {
  app.get(
    '/conversations',
    guarded(mind, '/conversations', async (c) => {
      const viewing = viewingOf(c, mind)
      const store = mind.backend.context
      const conversations = (await visibleConversations(mind, viewing)).sort((a, b) => b.createdAt.localeCompare(a.createdAt)).slice(0, CONVERSATIONS_LISTED)
      const rows = await Promise.all(
        conversations.map(async (conversation) => {
          const count = await store.messageCount(conversation.id)
          const [last] = count > 0 ? await store.messages(conversation.id, { fromSeq: count, limit: 1 }) : []
          const record = await mind.sessions.get(conversation.sessionId)
          return { conversation, count, last: last?.at, turns: record?.turns ?? 0 }
        }),
      )
      const form = viewing.principal.admin
        ? html`<form method="get" action="/conversations">${await userPicker(mind, viewing)} <button type="submit">Show</button> <span class="muted">(the agent alone: every conversation of the agent)</span></form>`
        : ''
      const intro = html`<p class="muted">Every message of every conversation is kept. As a conversation outgrows its budget, older turns fold into summaries, and summaries into summaries: open a conversation to walk that tree down to the original messages, and to see for each turn what the agent was given and why.</p>`
      const table =
        rows.length === 0
          ? html`<p data-testid="empty">No conversations in this view yet. They appear when a session begins a turn (POST /v1/turns/begin, session.begin() in a program, or an MCP client).</p>`
          : html`<table data-testid="conversation-table"><thead><tr><th scope="col">session</th><th scope="col">user</th><th scope="col">messages</th><th scope="col">turns</th><th scope="col">started</th><th scope="col">last message</th></tr></thead><tbody>${rows.map(
              (row) => html`<tr data-testid="conversation-row" data-session="${row.conversation.sessionId}">
<td><a href="/conversations/${row.conversation.id}${userQuery(viewing).replace('&', '?')}">${row.conversation.sessionId}</a></td><td>${row.conversation.user !== undefined ? (opensTurnOf(viewing, row.conversation.user) ? html`<a href="${userPageLink(row.conversation.user)}">${row.conversation.user}</a>` : row.conversation.user) : html`<span class="muted">none</span>`}</td>
<td data-testid="message-count">${row.count}</td><td>${row.turns}</td><td>${when(row.conversation.createdAt)}</td><td>${when(row.last)}</td></tr>`,
            )}</tbody></table>`
      return c.html(page({ title: 'Conversations', agent: mind.agent, principal: viewing.principal, active: '/conversations', body: html`${intro}${form}${table}` }))
    }),
  )

  app.get(
    '/conversations/:id',
    guarded(mind, '/conversations', async (c) => {
      const viewing = viewingOf(c, mind)
      const idParam = c.req.param('id') ?? ''
      const id = /^\d+$/.test(idParam) ? Number(idParam) : Number.NaN
      const conversation = Number.isInteger(id) ? (await visibleConversations(mind, viewing)).find((candidate) => candidate.id === id) : undefined
      // Another user's conversation is answered as one that does not exist.
      if (!conversation) throw notFoundError(`There is no conversation ${idParam} in this view.`, 'open one from the Conversations page')
      const store = mind.backend.context
      const [items, count, record] = await Promise.all([store.items(conversation.id), store.messageCount(conversation.id), mind.sessions.get(conversation.sessionId)])
      // Which message opened which turn, so a message links to its turn's "why".
      const turns = await Promise.all(Array.from({ length: record?.turns ?? 0 }, (_, i) => mind.turnProvenance({ sessionId: conversation.sessionId, turn: i + 1 })))
      const turnOf = new Map<number, number>()
      for (const turn of turns) if (turn) turnOf.set(turn.messageId, turn.number)
      const opening = new Map((await store.messagesById([...turnOf.keys()])).map((message) => [message.id, message.content]))
      const loaded = await loadItems(store, items)
      const dag: DagContext = { mind, sessionId: conversation.sessionId, user: conversation.user, viewing, turnOf, left: DAG_NODES }
      const window: Html[] = []
      for (const item of items) {
        if (dag.left <= 0) break
        if (item.kind === 'summary') {
          const summary = loaded.summaries.get(item.summaryId)
          if (summary) window.push(await summaryNode(summary, dag))
        } else {
          const message = loaded.messages.get(item.messageId)
          if (message) {
            dag.left--
            window.push(messageBlock(message, turnOf, conversation.sessionId, viewing, conversation.user))
          }
        }
      }
      const summaries = items.filter((item) => item.kind === 'summary').length
      const fallbacks = [...loaded.summaries.values()].filter((summary) => isDegradedMethod(summary.method)).length
      const turnList = turns.filter((turn) => turn !== null)
      const body = html`<style>.message { border-left: 3px solid var(--line); padding: .2rem .6rem; margin: .4rem 0 .4rem 1rem; } .summary-text { background: var(--soft); padding: .4rem .6rem; border-radius: 6px; margin: .3rem 0; }</style>
<p class="muted">Session <b data-testid="session-id">${conversation.sessionId}</b>${conversation.user !== undefined ? ` with ${conversation.user}` : ' (no user)'}, started ${when(conversation.createdAt)}: ${plural(count, 'message', 'messages')} stored. The context window holds ${plural(summaries, 'summary', 'summaries')} and ${plural(items.length - summaries, 'recent message', 'recent messages')}. Open a summary to see what it folds, down to the original messages; nothing is ever lost.</p>
<p><a href="/conversations${userQuery(viewing).replace('&', '?')}">back to conversations</a></p>
<h3>Turns</h3>
${
  turnList.length === 0
    ? html`<p class="muted">No turns recorded (messages appended without session.begin have no provenance).</p>`
    : html`<ol data-testid="turns">${turnList.map((turn) => html`<li data-testid="turn">${when(turn.startedAt)} · ${turn.type} · <span class="text">${excerpt(opening.get(turn.messageId) ?? '', 120)}</span>${opensTurnOf(viewing, turn.user) ? html` · <a href="/turns/${encodeURIComponent(conversation.sessionId)}/${turn.number}" data-testid="turn-link">what it was given, and why</a>` : ''}</li>`)}</ol>`
}
<h3>Summaries and messages</h3>
${
  fallbacks > 0
    ? html`<p class="warn" data-testid="degraded-notice">${fallbacks === summaries ? (summaries === 1 ? 'This summary was' : `All ${summaries} summaries of the window were`) : `${fallbacks} of the window's ${plural(summaries, 'summary', 'summaries')} were`} written by a fallback, not a model (no model was reachable when the conversation was compacted): they quote the messages rather than summarise them. The messages themselves are below each one.</p>`
    : ''
}
<div data-testid="dag">${window}</div>
${dag.left <= 0 ? html`<p class="muted">This page draws ${DAG_NODES} nodes at most; <code>engram context describe</code> and <code>engram context expand</code> reach the rest.</p>` : ''}`
      return c.html(page({ title: `Conversation ${conversation.sessionId}`, agent: mind.agent, principal: viewing.principal, active: '/conversations', body }))
    }),
  )
}
