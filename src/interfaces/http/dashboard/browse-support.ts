/**
 * What the dashboard's reading pages share: whose memory a request looks at (the rule of
 * `actingUser`, decision 0038), the users an administrator may pick from, an error answered as a
 * page (a refusal shows why and the fix, never the data), and small renderers.
 */
import type { Context } from 'hono'
import { html } from 'hono/html'
import { EngramError, ErrorCode } from '../../../core/errors.ts'
import { userFromKey, type Viewer } from '../../../core/owner.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import { locateMemoryPath, memoryPathOfSource } from '../../../memory/tree/memory-paths.ts'
import type { Principal } from '../credentials.ts'
import { actingUser, httpStatusOf, type ServeEnv } from '../support.ts'
import { type Html, page } from './layout.ts'

/** Who a page is for: the user it acts for (undefined: the agent's own view) and that user's viewer. */
export interface Viewing {
  principal: Principal
  user: string | undefined
  viewer: Viewer
}

/**
 * The view a request asks for with `?user=`: the token's own user, or (an administrator only) the
 * one named. Anyone else naming a user gets `access_denied`, as on the API.
 */
export function viewingOf(c: Context<ServeEnv>, mind: MindInternals): Viewing {
  const principal = c.get('principal')
  const requested = c.req.query('user')?.trim()
  const user = actingUser(principal, requested === undefined || requested === '' ? undefined : requested)
  return { principal, user, viewer: mind.scope(user).viewer }
}

/** The `user=` part of a link that keeps the current view (empty for the token's own). */
export function userQuery(viewing: Viewing): string {
  return viewing.user !== undefined && viewing.principal.admin ? `&user=${encodeURIComponent(viewing.user)}` : ''
}

/** The address of `user`'s page (browse-user.ts). */
export function userPageLink(user: string): string {
  return `/users/${encodeURIComponent(user)}`
}

/**
 * The users of this home an administrator may pick: those with a profile, a conversation of this
 * agent, or (embedded homes) a memory tree. Sorted.
 */
export async function knownUsers(mind: MindInternals): Promise<string[]> {
  const users = new Set<string>()
  for (const key of await mind.backend.documents.slugs('user')) {
    const user = userFromKey(key)
    if (user !== undefined) users.add(user)
  }
  for (const conversation of await mind.backend.context.listConversations(mind.agent)) if (conversation.user !== undefined) users.add(conversation.user)
  const withOwners = mind.backend as { owners?: () => Promise<{ users: { list: Array<{ user: string }> } }> }
  if (typeof withOwners.owners === 'function') for (const entry of (await withOwners.owners()).users.list) users.add(entry.user)
  return [...users].sort()
}

/** The user picker of a form: a select for an administrator, a line saying whose view it is otherwise. */
export async function userPicker(mind: MindInternals, viewing: Viewing): Promise<Html> {
  if (!viewing.principal.admin) {
    return html`<span class="muted" data-testid="view-of">${viewing.user === undefined ? "the agent's own memory and shared memory" : `${viewing.user}'s memories, the agent's and shared ones`}</span>`
  }
  const users = await knownUsers(mind)
  if (viewing.user !== undefined && !users.includes(viewing.user)) users.unshift(viewing.user)
  return html`<label>as <select name="user" data-testid="user-select"><option value="">the agent alone</option>${users.map(
    (user) => html`<option value="${user}"${user === viewing.user ? html` selected` : ''}>${user}</option>`,
  )}</select></label>`
}

/** An error of a page as a page: its message and fix, with the status its code maps to. */
export function errorPage(c: Context<ServeEnv>, mind: MindInternals, active: string, error: EngramError): Response | Promise<Response> {
  const status = httpStatusOf(error.code)
  const title = status === 403 ? 'Not yours to see' : status === 404 ? 'Not found' : status === 400 ? 'Refused' : 'Something went wrong'
  const body = html`<p class="warn" data-testid="error" data-code="${error.code}">${error.message}</p>
<p><b>Fix:</b> ${error.fix ?? 'see the message'}</p>`
  return c.html(page({ title, agent: mind.agent, principal: c.get('principal'), active, body }), status)
}

/** A page handler whose expected errors (refusals, unknown paths, bad input) are answered as pages. */
export function guarded(mind: MindInternals, active: string, handler: (c: Context<ServeEnv>) => Promise<Response>): (c: Context<ServeEnv>) => Promise<Response> {
  return async (c) => {
    try {
      return await handler(c)
    } catch (error) {
      if (EngramError.is(error)) return errorPage(c, mind, active, error)
      throw error
    }
  }
}

/** A not-found refusal for something the viewer may not know exists. */
export function notFoundError(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.notFound, category: 'user', message, fix })
}

/** A path other parts name (home-relative, an index source or a memory path) as a memory path of this viewer, when it has one. */
export function memoryPath(mind: MindInternals, viewing: Viewing, path: string): string | undefined {
  const file = path.split('#')[0] ?? path
  const known = memoryPathOfSource(file, mind.layout, viewing.viewer)
  if (known !== undefined) return known
  try {
    return locateMemoryPath(file, mind.layout, viewing.viewer).path
  } catch {
    return undefined
  }
}

/** `text` cut to `max` characters with an ellipsis. */
export function excerpt(text: string, max = 240): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

/** An ISO instant as `2026-11-24 06:47` (UTC), or '' when absent. */
export function when(iso: string | undefined): string {
  return iso === undefined ? '' : iso.replace('T', ' ').slice(0, 16)
}

/** A frontmatter or metadata value as text. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return JSON.stringify(value)
}
