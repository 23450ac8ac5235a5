/**
 * Whose memory an operations page shows (decision 0038): the viewer's own. A user's token sees
 * that user's (naming another user in `?user=` is refused, as `actingUser` refuses it for the API);
 * an administrator sees any user they pick (`?user=`), or every owner with no user picked; the
 * agent's token and an open loopback server see the agent's own. Refusals are pages, not JSON.
 */
import type { Context } from 'hono'
import { html } from 'hono/html'
import { EngramError, ErrorCode } from '../../../core/errors.ts'
import type { Viewer } from '../../../core/owner.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import type { ServeEnv } from '../support.ts'
import { viewingOf as readingViewOf } from './browse-support.ts'
import { page } from './layout.ts'

export interface Viewing {
  /** The user whose memory is shown; undefined: the agent's own (or every owner, for an administrator). */
  user: string | undefined
  /** An administrator with no user picked: whole-mind numbers and every owner's pictures. */
  everyone: boolean
  admin: boolean
  /** The users an administrator can pick from (empty for anyone else). */
  users: string[]
  viewer: Viewer
}

/** The viewing of this request, from its principal and `?user=` (the reading pages' rule); throws `access_denied` for another user's. */
export async function viewingOf(c: Context<ServeEnv>, mind: MindInternals): Promise<Viewing> {
  const { principal, user, viewer } = readingViewOf(c, mind)
  const admin = principal.admin
  return { user, everyone: admin && user === undefined, admin, users: admin ? await mind.backend.users() : [], viewer }
}

/** Who is shown, in words. */
export function viewingLabel(viewing: Viewing): string {
  if (viewing.user !== undefined) return `user ${viewing.user}`
  return viewing.everyone ? 'every owner (administrator)' : 'the agent alone'
}

/** The administrator's user picker (a GET form: no script needed); nothing for anyone else. */
export function userPicker(viewing: Viewing, path: string): ReturnType<typeof html> | string {
  if (!viewing.admin) return ''
  return html`<form class="inline" method="get" action="${path}" data-testid="user-picker"><label>User <select name="user" data-testid="user-select"><option value="">— every owner / the agent —</option>${viewing.users.map(
    (user) => html`<option value="${user}"${user === viewing.user ? html` selected` : ''}>${user}</option>`,
  )}</select></label> <button type="submit" class="secondary">Show</button></form>`
}

/**
 * Runs `render` for the request's viewing; a request for another user's memory gets a 403 page
 * with the fix, as the API answers it.
 */
export async function withViewing(c: Context<ServeEnv>, mind: MindInternals, title: string, active: string, render: (viewing: Viewing) => Promise<Response>): Promise<Response> {
  let viewing: Viewing
  try {
    viewing = await viewingOf(c, mind)
  } catch (error) {
    if (!EngramError.is(error) || error.code !== ErrorCode.accessDenied) throw error
    const body = html`<p class="warn" data-testid="denied">${error.message}</p><p class="muted">Fix: ${error.fix ?? ''}</p>`
    return c.html(page({ title, agent: mind.agent, principal: c.get('principal'), active, body }), 403)
  }
  return render(viewing)
}
