/**
 * The dashboard's pages for changing memory (decision 0071): `/edit` lists the memories of the
 * view (rules, lessons, profile facts, as the memory API lists them) with Edit and Forget, and a
 * form to add one; `/edit/memory` edits one (for a user's profile fact: corrects it); and
 * `/edit/changed` shows what a write changed — before and after, read back from the store — with
 * its undo. The writes themselves are edit-writes.ts. Every control is a labelled form field or a
 * button with text, usable from the keyboard; the page's one script sends them (no inline script).
 */
import type { Hono } from 'hono'
import { html } from 'hono/html'
import { ENGRAM_KINDS, type EngramKind, isRuleKind, ruleWithPolarity } from '../../../core/engram.ts'
import { type Owner, ownerOfUser, userOfOwner } from '../../../core/owner.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import { forgettableOwners } from '../../../tools/forget-targets.ts'
import { type MemoryRecord, pathOfMemoryId } from '../../../tools/memories.ts'
import type { ServeEnv } from '../support.ts'
import { excerpt, guarded, knownUsers, userPicker, userQuery, type Viewing, viewingOf, when } from './browse-support.ts'
import { actorOf, CHANGE_ACTIONS, type ChangeAction, isNotFound } from './edit-writes.ts'
import { type Html, page } from './layout.ts'
import { archivedMemories } from './ops-data.ts'
import { viewingOf as operationsViewingOf } from './ops-viewer.ts'

/** Memories listed on `/edit` at most; the page says when there are more. */
const EDIT_ROWS = 300

/** The kinds an operator may add, in words (decision 0071: every kind `memorize` takes). */
const KIND_LABELS: Record<EngramKind, string> = {
  always: 'rule: always do this',
  never: 'rule: never do this',
  when: 'rule: when this happens, do that',
  lesson: 'lesson: a fact learned',
  profile: 'profile fact: "Key: value"',
}

const STYLE = html`<style>
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
form.edit label { display: block; margin: .6rem 0 .2rem; font-weight: 500; }
form.edit button { margin-top: .5rem; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.side { border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; }
.side.before { border-left: 4px solid var(--warn); }
.side.after { border-left: 4px solid var(--accent); }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; margin: .6rem 0; }
</style>`

const userField = (user: string | undefined): Html => (user === undefined ? html`` : html`<input type="hidden" name="user" value="${user}">`)

function ownerWords(owner: Owner): string {
  const user = userOfOwner(owner)
  return user !== undefined ? user : owner === 'agent' ? 'the agent' : 'shared'
}

/** A memory's text as a person reads it: a rule with its polarity, as the archive and the prompt show it. */
function shownText(record: Pick<MemoryRecord, 'kind' | 'text'>): string {
  return isRuleKind(record.kind) ? ruleWithPolarity(record.kind, record.text) : record.text
}

/** Whether the viewing's principal may change a memory of `owner` (edit-writes.ts `actorOf`'s rule). */
function mayChange(mind: MindInternals, viewing: Viewing, owner: Owner): boolean {
  return viewing.principal.admin || forgettableOwners(mind.scope(viewing.user).viewer).includes(owner)
}

/** The `/v1`-style body naming the user a write acts for, as the viewing names it. */
function bodyUser(viewing: Viewing): { user?: string } {
  return viewing.user !== undefined && viewing.principal.admin ? { user: viewing.user } : {}
}

async function addForm(mind: MindInternals, viewing: Viewing): Promise<Html> {
  let whose: Html
  if (viewing.principal.admin) {
    const users = await knownUsers(mind)
    if (viewing.user !== undefined && !users.includes(viewing.user)) users.unshift(viewing.user)
    whose = html`<label for="add-user">For</label><select id="add-user" name="user" data-testid="add-user"><option value="">the agent (every user's sessions see it)</option>${users.map(
      (user) => html`<option value="${user}"${user === viewing.user ? html` selected` : ''}>user ${user}</option>`,
    )}</select>`
  } else {
    whose = html`<p>For <b>${viewing.user === undefined ? 'the agent' : `user ${viewing.user}`}</b> (this token's own memory).</p>`
  }
  return html`<section aria-labelledby="add-heading"><h3 id="add-heading">Add a memory</h3>
<form class="edit" data-post="/edit/add" data-testid="add-form">${whose}
<label for="add-kind">Kind</label><select id="add-kind" name="kind" data-testid="add-kind">${ENGRAM_KINDS.map((kind) => html`<option value="${kind}"${kind === 'lesson' ? html` selected` : ''}>${KIND_LABELS[kind]}</option>`)}</select>
<label for="add-text">Text</label><textarea id="add-text" name="text" required maxlength="2000" aria-describedby="add-help" data-testid="add-text"></textarea>
<p id="add-help" class="muted">Written through the encoding gate, as the agent's memorize tool writes: what is already remembered is not added twice, and with memory off (memory.mode) nothing is written; either way this page says so.</p>
<button type="submit">Add</button>
</form></section>`
}

function memoryRow(mind: MindInternals, viewing: Viewing, record: MemoryRecord): Html {
  const changeable = mayChange(mind, viewing, record.owner)
  const short = excerpt(shownText(record), 60)
  const controls = changeable
    ? html`<a href="/edit/memory?id=${encodeURIComponent(record.id)}${userQuery(viewing)}" data-testid="edit-link">Edit<span class="sr-only">: ${short}</span></a>
<button class="secondary" data-post="/edit/forget" data-body="${JSON.stringify({ id: record.id, ...bodyUser(viewing) })}" data-testid="forget-button">Forget<span class="sr-only">: ${short}</span></button>`
    : html`<span class="muted">${ownerWords(record.owner)}'s: an administrator changes it</span>`
  return html`<tr data-testid="edit-row" data-id="${record.id}" data-owner="${record.owner}" data-kind="${record.kind}">
<td><span class="pill">${record.kind}</span></td><td>${ownerWords(record.owner)}</td><td class="text" data-testid="edit-row-text">${shownText(record)}</td><td class="muted">${record.createdAt ?? ''}</td><td>${controls}</td></tr>`
}

/** The side of a change: a memory's text and where it is now, read from the store. */
interface Side {
  state: 'live' | 'archived' | 'absent'
  text?: string
  kind?: string
  owner?: Owner
  since?: string
  reason?: string
}

async function sideOf(mind: MindInternals, viewing: Viewing, archive: Awaited<ReturnType<typeof archivedMemories>>, id: string | undefined): Promise<Side> {
  if (id === undefined) return { state: 'absent' }
  try {
    const record = await mind.memories.get(id, viewing.user !== undefined ? { user: viewing.user } : {})
    return { state: 'live', text: shownText(record), kind: isRuleKind(record.kind) ? 'rule' : record.kind === 'profile' ? 'profile fact' : record.kind, owner: record.owner }
  } catch (error) {
    if (!isNotFound(error)) throw error
  }
  const path = pathOfMemoryId(id)
  const archived = archive.find((item) => item.target === path)
  if (!archived) return { state: 'absent' }
  return { state: 'archived', text: archived.text, kind: archived.what, owner: archived.owner, ...(archived.forgottenAt ? { since: archived.forgottenAt } : {}), ...(archived.reason ? { reason: archived.reason } : {}) }
}

/** An archived entry's reason as words: the archive keeps it with `_` for spaces, and an edit's names the new memory by its id. */
function reasonWords(reason: string): string {
  return /^updated\b/.test(reason) ? 'replaced by an edit' : reason.replace(/_/g, ' ')
}

function sideBlock(side: Side, label: 'Before' | 'After', action: ChangeAction): Html {
  const where =
    side.state === 'live'
      ? html`<p class="muted" data-testid="side-state">In memory now: search finds it, and the next turn's prompt can hold it.</p>`
      : side.state === 'archived'
        ? html`<p class="muted" data-testid="side-state">In the Archive${side.since ? ` since ${when(side.since)}` : ''}${side.reason ? ` (${reasonWords(side.reason)})` : ''}: out of search and the prompt; Restore brings it back.</p>`
        : html`<p class="muted" data-testid="side-state">${label === 'Before' ? (action === 'added' ? 'Nothing: this memory is new.' : 'Nothing.') : 'Nothing: out of search and the prompt.'}</p>`
  return html`<div class="side ${label.toLowerCase()}" data-testid="${label.toLowerCase()}" data-state="${side.state}"><h3>${label}</h3>${
    side.text !== undefined ? html`<p><span class="pill">${side.kind}</span> <span class="pill">${side.owner ? ownerWords(side.owner) : ''}</span></p><div class="text" data-testid="side-text">${side.text}</div>` : ''
  }${where}</div>`
}

const SUMMARIES: Record<ChangeAction, string> = {
  added: 'A memory was added.',
  edited: 'A memory was edited: the new text was written through the encoding gate, the old text moved to the Archive.',
  corrected: 'A profile fact was corrected: the new value was written through the encoding gate, the old value moved to the Archive.',
  forgotten: 'A memory was forgotten: it moved to the Archive.',
  restored: 'A memory was restored from the Archive.',
  undone: 'A change was undone.',
}

export function registerEditPages(app: Hono<ServeEnv>, mind: MindInternals): void {
  app.get(
    '/edit',
    guarded(mind, '/edit', async (c) => {
      const viewing = viewingOf(c, mind)
      const page_ = await mind.memories.getAll({ ...(viewing.user !== undefined ? { user: viewing.user } : {}), limit: EDIT_ROWS })
      const picker = viewing.principal.admin
        ? html`<form method="get" action="/edit" data-testid="edit-picker">${await userPicker(mind, viewing)} <button type="submit" class="secondary">Show</button></form>`
        : html`<p>${await userPicker(mind, viewing)}</p>`
      const list =
        page_.memories.length === 0
          ? html`<p class="muted" data-testid="edit-empty">No rules, lessons or profile facts in this view yet.</p>`
          : html`<table data-testid="edit-table"><caption class="sr-only">Memories of this view</caption><thead><tr><th scope="col">kind</th><th scope="col">whose</th><th scope="col">text</th><th scope="col">since</th><th scope="col">change</th></tr></thead><tbody>${page_.memories.map((record) => memoryRow(mind, viewing, record))}</tbody></table>${
              page_.total > page_.memories.length ? html`<p class="muted">The first ${page_.memories.length} of ${page_.total}; search on the Memories page to find the others.</p>` : ''
            }`
      const body = html`${STYLE}<p class="muted">Every change here goes through the same write path as the agent's own: the encoding gate, the owner rules, the activity log. Editing or forgetting moves the old text to the <a href="/archive${userQuery(viewing).replace('&', '?')}">Archive</a>, where Restore brings it back; each change shows what it changed, with its undo.</p>
${picker}${await addForm(mind, viewing)}
<section aria-labelledby="list-heading"><h3 id="list-heading">Rules, lessons and profile facts</h3>${list}</section>`
      return c.html(page({ title: 'Edit memory', agent: mind.agent, principal: viewing.principal, active: '/edit', body }))
    }),
  )

  app.get(
    '/edit/memory',
    guarded(mind, '/edit', async (c) => {
      const viewing = viewingOf(c, mind)
      const id = c.req.query('id') ?? ''
      const record = await mind.memories.get(id, viewing.user !== undefined ? { user: viewing.user } : {})
      // Refused here as the write would refuse it (another user's: not found; the agent's, for a user: why).
      actorOf(c, mind, id, viewing.user)
      const correcting = record.kind === 'profile' && userOfOwner(record.owner) !== undefined
      const title = correcting ? 'Correct a profile fact' : 'Edit a memory'
      const help = correcting
        ? `A profile fact reads "Key: value" (for example "Role: billing export maintainer"). The corrected fact replaces this one in ${ownerWords(record.owner)}'s profile; this one moves to the Archive, where Restore brings it back.`
        : 'Saving writes the new text through the encoding gate, as the agent writes, and moves this text to the Archive, where Restore brings it back.'
      const body = html`${STYLE}<p class="muted"><span class="pill">${record.kind}</span> of <b data-testid="edit-owner">${ownerWords(record.owner)}</b>${record.createdAt ? `, since ${record.createdAt}` : ''}. <a href="/edit${userQuery(viewing).replace('&', '?')}">back to the list</a></p>
<p>Now: <span class="text" data-testid="edit-current">${shownText(record)}</span></p>
<form class="edit" data-post="/edit/update" data-testid="edit-form"><input type="hidden" name="id" value="${record.id}">${userField(bodyUser(viewing).user)}
<label for="edit-text">${correcting ? 'Corrected fact' : 'New text'}</label><textarea id="edit-text" name="text" required maxlength="2000" aria-describedby="edit-help" data-testid="edit-text">${record.text}</textarea>
<p id="edit-help" class="muted">${help}</p>
<button type="submit">${correcting ? 'Save the correction' : 'Save'}</button>
</form>
<form class="edit" data-post="/edit/forget" data-testid="forget-form"><input type="hidden" name="id" value="${record.id}">${userField(bodyUser(viewing).user)}
<label for="forget-reason">Why forget it (optional, kept with the archived copy)</label><input type="text" id="forget-reason" name="reason" maxlength="500" size="48">
<button type="submit" class="secondary">Forget this memory</button>
</form>`
      return c.html(page({ title, agent: mind.agent, principal: viewing.principal, active: '/edit', body }))
    }),
  )

  app.get(
    '/edit/changed',
    guarded(mind, '/edit', async (c) => {
      const viewing = viewingOf(c, mind)
      const requested = c.req.query('action') ?? ''
      const action: ChangeAction = (CHANGE_ACTIONS as readonly string[]).includes(requested) ? (requested as ChangeAction) : 'undone'
      const beforeId = c.req.query('before') || undefined
      const afterId = c.req.query('after') || undefined
      // Only memories this view may see are read back; another user's id reads as nothing.
      for (const id of [beforeId, afterId]) if (id !== undefined) actorOf(c, mind, id, viewing.user)
      const archive = await archivedMemories(mind, await operationsViewingOf(c, mind))
      const [before, after] = await Promise.all([sideOf(mind, viewing, archive, beforeId), sideOf(mind, viewing, archive, afterId)])
      // The undo swaps the two sides: what the change made is forgotten, what it took away restored.
      const undoable = (after.state === 'live' || afterId === undefined) && (before.state === 'archived' || beforeId === undefined) && (beforeId !== undefined || afterId !== undefined)
      const undoBody = JSON.stringify({ ...(beforeId !== undefined ? { before: beforeId } : {}), ...(afterId !== undefined ? { after: afterId } : {}), ...bodyUser(viewing) })
      const owner = after.owner ?? before.owner ?? ownerOfUser(viewing.user)
      const body = html`${STYLE}<p data-testid="change-summary" role="status">${SUMMARIES[action]} <span class="muted">(${ownerWords(owner)}'s memory)</span></p>
<div class="sides" data-testid="change">${sideBlock(before, 'Before', action)}${sideBlock(after, 'After', action)}</div>
${
  undoable
    ? html`<p><button data-post="/edit/undo" data-body="${undoBody}" data-testid="undo-button">Undo this change</button> <span class="muted">${afterId !== undefined ? 'forgets the after (to the Archive)' : ''}${afterId !== undefined && beforeId !== undefined ? ' and ' : ''}${beforeId !== undefined ? 'restores the before' : ''}.</span></p>`
    : html`<p class="muted" data-testid="not-undoable">This change cannot be undone from here any more: one side has changed since. The Archive and the Edit page show where each memory is now.</p>`
}
<p><a href="/edit${userQuery(viewing).replace('&', '?')}">back to editing</a> · <a href="/archive${userQuery(viewing).replace('&', '?')}">the Archive</a></p>`
      return c.html(page({ title: 'What changed', agent: mind.agent, principal: viewing.principal, active: '/edit', body }))
    }),
  )
}

