/**
 * `/users/:user`: what the agent knows about one user, on one page (issue 30) — their profile,
 * then each kind of memory they own (rules, lessons, knowledge, procedures, episodes, topics,
 * skills) with its date and source, their recent turns linking to what each was given and why,
 * and what was forgotten or superseded, and when. Only the user's own memory: the agent's and
 * shared memory they also read are on the Memories page. An administrator opens any user's page;
 * a user's token only its own — another user's page is answered as one that does not exist, as a
 * turn of another user is (decision 0072).
 */
import type { Hono } from 'hono'
import { html } from 'hono/html'
import { parseFrontmatter } from '../../../core/frontmatter.ts'
import { memoryKinds } from '../../../core/memory-kinds.ts'
import { ownerOfUser, userKey } from '../../../core/owner.ts'
import { profileFacts } from '../../../memory/engrams/user-profiles.ts'
import { factValidityOfUnit, validityNote } from '../../../memory/retrieval/fact-history.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import type { StoredUnit, TurnRecord, UnitKind } from '../../../storage/contracts.ts'
import { hitReference } from '../../../tools/search-memory-tool.ts'
import type { ServeEnv } from '../support.ts'
import { excerpt, guarded, knownUsers, memoryPath, notFoundError, userQuery, type Viewing, when } from './browse-support.ts'
import { type Html, page } from './layout.ts'
import { cutKeepingLines, markdown } from './markdown.ts'
import { type ArchivedMemory, archivedMemories } from './ops-data.ts'
import { plural } from './words.ts'

/** How a kind is named on the page: its heading, and its noun for one and for many. */
const NAMES: Partial<Record<UnitKind, readonly [string, string, string]>> = {
  rule: ['Rules', 'rule', 'rules'],
  lesson: ['Lessons', 'lesson', 'lessons'],
  knowledge: ['Knowledge', 'knowledge item', 'knowledge items'],
  procedure: ['Procedures', 'procedure', 'procedures'],
  episode: ['Episodes', 'episode', 'episodes'],
  topic: ['Topics', 'topic', 'topics'],
  skill: ['Skills', 'skill', 'skills'],
}
/** A kind the names above do not know (one registered later, core/memory-kinds.ts): its own name, capitalised, plus "s". */
function namesOf(kind: UnitKind): readonly [string, string, string] {
  return NAMES[kind] ?? [`${kind.charAt(0).toUpperCase()}${kind.slice(1)}s`, kind, `${kind}s`]
}
/**
 * The kinds a user's page lists, in order: entries, then every document kind of the registry with
 * a unit (the profile has its own section), then topics and skills. Activity lines have the Activity page.
 */
const SECTIONS: readonly UnitKind[] = ['rule', 'lesson', ...memoryKinds().flatMap(([, spec]) => (spec.unit === null || spec.unit === 'user' ? [] : [spec.unit as UnitKind])), 'topic', 'skill']
/** Memories of one kind listed at most; the rest are a click away on the Memories page. */
const PER_KIND = 50
/** Units of the index read at most for one page (a page at a time, the viewer's filter applied in the index). */
const UNITS_READ = 5_000
/** Recent turns listed. */
const TURNS_SHOWN = 20
/** Saved versions of the profile compared for replaced facts. */
const PROFILE_VERSIONS_READ = 20

/** The user's own units of the listed kinds, by kind, newest first; `cut` when the view held more than the page reads. */
async function ownUnits(mind: MindInternals, viewing: Viewing, owner: string): Promise<{ byKind: Map<UnitKind, StoredUnit[]>; cut: boolean }> {
  const byKind = new Map<UnitKind, StoredUnit[]>()
  const filter = { viewer: viewing.viewer, kinds: [...SECTIONS] }
  let cut = true
  for (let offset = 0; offset < UNITS_READ; offset += 500) {
    const units = await mind.backend.index.list(filter, { limit: 500, offset })
    for (const unit of units) {
      if (unit.owner !== owner) continue
      const list = byKind.get(unit.kind)
      if (list) list.push(unit)
      else byKind.set(unit.kind, [unit])
    }
    if (units.length < 500) {
      cut = false
      break
    }
  }
  for (const units of byKind.values()) units.sort((a, b) => b.createdAt.localeCompare(a.createdAt))
  return { byKind, cut }
}

function fileHref(path: string, viewing: Viewing): string {
  return `/memories/file?path=${encodeURIComponent(path.split('#')[0] ?? path)}${userQuery(viewing)}`
}

function unitRow(mind: MindInternals, viewing: Viewing, unit: StoredUnit): Html {
  const ref = hitReference(unit, mind.layout, viewing.viewer)
  const note = validityNote(factValidityOfUnit(unit), (slug) => slug)
  return html`<tr data-testid="user-memory" data-kind="${unit.kind}">
<td class="text">${markdown(cutKeepingLines(unit.text, 600))}${note !== '' ? html`<div class="muted">${note}</div>` : ''}</td>
<td class="nowrap">${when(unit.createdAt).slice(0, 10)}</td>
<td><a href="${fileHref(ref, viewing)}" data-testid="user-memory-source">${ref}</a></td></tr>`
}

/** One kind's table, with the reason its items are degraded said once above it (episodes summarised without a model). */
function kindSection(mind: MindInternals, viewing: Viewing, kind: UnitKind, units: readonly StoredUnit[]): Html {
  const [heading, one, many] = namesOf(kind)
  const shown = units.slice(0, PER_KIND)
  const degraded = new Map<string, number>()
  for (const unit of units) if (typeof unit.meta?.degraded === 'string') degraded.set(unit.meta.degraded, (degraded.get(unit.meta.degraded) ?? 0) + 1)
  return html`<section aria-labelledby="kind-${kind}" data-testid="user-section" data-kind="${kind}">
<h3 id="kind-${kind}">${heading} <span class="muted">(${plural(units.length, one, many)})</span></h3>
${[...degraded].map(([reason, n]) => html`<p class="warn" data-testid="degraded-notice">${n === units.length ? (n === 1 ? 'This one is' : n === 2 ? 'Both are' : `All ${n} are`) : `${n} of these are`} degraded: ${reason}. The text is the conversation's own lines, not a summary a model wrote.</p>`)}
<table><thead><tr><th scope="col">what it says</th><th scope="col">date</th><th scope="col">source</th></tr></thead><tbody>${shown.map((unit) => unitRow(mind, viewing, unit))}</tbody></table>
${units.length > shown.length ? html`<p><a href="/memories?kind=${kind}${userQuery(viewing)}">All ${plural(units.length, one, many)} on the Memories page</a></p>` : ''}
</section>`
}

/** The profile's facts, with the date it last changed and its file. */
async function profileSection(mind: MindInternals, viewing: Viewing, user: string): Promise<Html> {
  const doc = await mind.backend.documents.read('user', userKey(user))
  const facts = doc ? profileFacts(doc.body) : []
  const path = memoryPath(mind, viewing, `shared/users/${userKey(user)}.md`)
  const changed = typeof doc?.frontmatter.updated_at === 'string' ? doc.frontmatter.updated_at : undefined
  return html`<section aria-labelledby="kind-profile" data-testid="user-section" data-kind="profile">
<h3 id="kind-profile">Profile <span class="muted">(${plural(facts.length, 'fact', 'facts')})</span></h3>
${
  facts.length === 0
    ? html`<p class="muted">No profile yet: it fills as ${user} tells the agent about themselves (the memorize tool, kind profile).</p>`
    : html`<p class="muted">Last changed ${when(changed) || 'at an unknown date'}${path ? html`, kept in <a href="${fileHref(path, viewing)}" data-testid="profile-source">${path}</a>` : ''}. Every agent of this home reads it.</p>
<ul data-testid="profile-facts">${facts.map((fact) => html`<li data-testid="profile-fact">${fact.text}</li>`)}</ul>`
}
</section>`
}

/** Facts a later write of the profile replaced or took away: each saved version compared with what followed it. */
async function replacedFacts(mind: MindInternals, user: string, forgotten: ReadonlySet<string>): Promise<Array<{ text: string; at: string; by: string | undefined }>> {
  const key = userKey(user)
  const current = await mind.backend.documents.read('user', key)
  const versions = (await mind.backend.documents.versions('user', key)).slice(0, PROFILE_VERSIONS_READ)
  const replaced: Array<{ text: string; at: string; by: string | undefined }> = []
  let after = current ? profileFacts(current.body).map((fact) => fact.text) : []
  for (const version of versions) {
    // A backend that cannot read a saved version by its path leaves it out: nothing is guessed.
    const text = await mind.backend.documents.readArchived?.(version.path)
    if (text === undefined || text === null) continue
    const before = profileFacts(parseFrontmatter(text).body).map((fact) => fact.text)
    for (const fact of before) {
      if (after.includes(fact) || forgotten.has(fact)) continue
      const factKey = /^([^:]{1,40}):/.exec(fact)?.[1]
      replaced.push({ text: fact, at: version.archivedAt, by: factKey === undefined ? undefined : after.find((next) => next.startsWith(`${factKey}:`)) })
    }
    after = before
  }
  return replaced
}

function archivedRow(item: ArchivedMemory): Html {
  return html`<tr data-testid="user-forgotten">
<td><span class="pill">${item.what}</span></td><td class="text">${markdown(cutKeepingLines(item.text, 400))}</td>
<td class="nowrap" data-testid="forgotten-at">${item.forgottenAt ? when(item.forgottenAt) : 'date not recorded'}</td>
<td data-testid="forgotten-why">${item.why === 'merged' ? 'merged' : 'forgotten'}${item.reason ? html`: ${item.reason}` : ''}</td></tr>`
}

async function changesSection(mind: MindInternals, viewing: Viewing, user: string, superseded: readonly StoredUnit[]): Promise<Html> {
  const archived = (await archivedMemories(mind, { user, everyone: false, admin: viewing.principal.admin, users: [], viewer: viewing.viewer })).filter((item) => item.owner === ownerOfUser(user))
  const replaced = await replacedFacts(mind, user, new Set(archived.filter((item) => item.what === 'profile fact').map((item) => item.text)))
  const archiveHref = `/archive${viewing.principal.admin ? `?user=${encodeURIComponent(user)}` : ''}`
  return html`<section aria-labelledby="kind-changes" data-testid="user-section" data-kind="changes">
<h3 id="kind-changes">Forgotten or superseded</h3>
<p class="muted">Nothing is lost: what was forgotten waits in the <a href="${archiveHref}">archive</a> (restorable); what a newer fact superseded stays findable as history.</p>
${
  archived.length === 0
    ? html`<p class="muted" data-testid="nothing-forgotten">Nothing of ${user}'s was forgotten.</p>`
    : html`<h4>Forgotten (${plural(archived.length, 'memory', 'memories')})</h4><table data-testid="user-forgotten-table"><thead><tr><th scope="col">kind</th><th scope="col">what it said</th><th scope="col">when</th><th scope="col">why</th></tr></thead><tbody>${archived.map(archivedRow)}</tbody></table>`
}
${
  replaced.length + superseded.length === 0
    ? html`<p class="muted">No fact of ${user}'s was superseded.</p>`
    : html`<h4>Superseded (${plural(replaced.length + superseded.length, 'fact', 'facts')})</h4><table data-testid="user-superseded-table"><thead><tr><th scope="col">what it said</th><th scope="col">when</th><th scope="col">what replaced it</th></tr></thead><tbody>
${replaced.map((fact) => html`<tr data-testid="user-superseded"><td class="text">${fact.text}</td><td class="nowrap">${when(fact.at)}</td><td>${fact.by ?? html`<span class="muted">taken out of the profile</span>`}</td></tr>`)}
${superseded.map((unit) => {
  const validity = factValidityOfUnit(unit)
  return html`<tr data-testid="user-superseded"><td class="text">${markdown(cutKeepingLines(unit.text, 300))}</td><td class="nowrap">${validity?.validUntil ? when(validity.validUntil) : ''}</td><td>${validity?.supersededBy ?? ''}</td></tr>`
})}
</tbody></table>`
}
</section>`
}

async function turnsSection(mind: MindInternals, turns: readonly TurnRecord[]): Promise<Html> {
  if (turns.length === 0) return html`<p class="muted" data-testid="no-turns">No turns yet: they appear when a session of this user begins one.</p>`
  const opening = new Map((await mind.backend.context.messagesById(turns.map((turn) => turn.messageId))).map((message) => [message.id, message.content]))
  return html`<table data-testid="user-turns"><thead><tr><th scope="col">when (UTC)</th><th scope="col">session</th><th scope="col">what they said</th><th scope="col">what the agent was given</th></tr></thead><tbody>${turns.map(
    (turn) => html`<tr data-testid="user-turn"><td class="nowrap">${when(turn.startedAt)}</td><td>${turn.sessionId}</td><td class="text">${excerpt(opening.get(turn.messageId) ?? '', 160)}</td>
<td><a href="/turns/${encodeURIComponent(turn.sessionId)}/${turn.turn}" data-testid="turn-why-link">why: turn ${turn.turn} of ${turn.sessionId}</a></td></tr>`,
  )}</tbody></table>`
}

export function registerUserPages(app: Hono<ServeEnv>, mind: MindInternals): void {
  app.get(
    '/users/:user',
    // No entry of the navigation is this page's: none is marked current.
    guarded(mind, '/users', async (c) => {
      const principal = c.get('principal')
      const user = c.req.param('user') ?? ''
      const missing = notFoundError(`There is no page of user ${JSON.stringify(user)} in this view.`, principal.admin ? 'pick a user from the overview' : 'open your own page from the overview')
      // Another user's page is answered as one that does not exist: a token learns nothing of other users.
      if (!principal.admin && principal.user !== user) throw missing
      // The users the overview links to (the backend's), and those the pickers know (a profile, a conversation).
      if (principal.admin && !(await mind.backend.users()).includes(user) && !(await knownUsers(mind)).includes(user)) throw missing
      const viewing: Viewing = { principal, user, viewer: mind.scope(user).viewer }
      const { byKind, cut } = await ownUnits(mind, viewing, ownerOfUser(user))
      const superseded = (byKind.get('knowledge') ?? []).filter((unit) => factValidityOfUnit(unit)?.supersededBy !== undefined)
      const turns = (await mind.backend.lifecycle.recentTurns(mind.agent, user, TURNS_SHOWN)).sort((a, b) => b.startedAt.localeCompare(a.startedAt))
      const links = userQuery(viewing).replace('&', '?')
      const body = html`<p class="muted">What the agent knows about <b data-testid="user-name">${user}</b>: the memories ${user} owns, newest first. The agent's own and shared memory, which ${user}'s sessions also read, are on the <a href="/memories${links}">Memories page</a>; see also ${user}'s <a href="/conversations${links}">conversations</a> and <a href="/activity${links}">activity</a>. To correct, forget or add a rule, lesson or profile fact of ${user}'s, use <a href="/edit${links}" data-testid="user-edit-link">Edit ${user}'s memory</a>.</p>
<nav aria-label="Sections of this page"><ul class="inline-list"><li><a href="#kind-profile">Profile</a></li>${SECTIONS.filter((kind) => byKind.has(kind)).map((kind) => html`<li><a href="#kind-${kind}">${namesOf(kind)[0]}</a></li>`)}<li><a href="#recent-turns">Recent turns</a></li><li><a href="#kind-changes">Forgotten or superseded</a></li></ul></nav>
${cut ? html`<p class="warn" data-testid="units-cut">This view holds more than ${UNITS_READ.toLocaleString('en')} memories; the page lists those among the first ${UNITS_READ.toLocaleString('en')}. The <a href="/memories${links}">Memories page</a> searches them all.</p>` : ''}
${await profileSection(mind, viewing, user)}
${SECTIONS.flatMap((kind) => {
  const units = byKind.get(kind)
  return units && units.length > 0 ? [kindSection(mind, viewing, kind, units)] : []
})}
<section aria-labelledby="recent-turns"><h3 id="recent-turns">Recent turns</h3>${await turnsSection(mind, turns)}</section>
${await changesSection(mind, viewing, user, superseded)}`
      return c.html(page({ title: `User ${user}`, agent: mind.agent, principal, active: '/users', body }))
    }),
  )
}
