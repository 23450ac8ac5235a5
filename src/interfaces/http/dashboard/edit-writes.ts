/**
 * The dashboard's writes (decision 0071): add, edit, forget, restore and undo one memory, each a
 * JSON POST from the dashboard's script, each through the memory API (`mind.memories`, decision
 * 0065) or `mind.restore` — the encoding gate, the owner rules and the activity log of every other
 * write; nothing here touches a file. They are protected as every write of this server is (app.ts,
 * decision 0051): JSON bodies only, no cross-site Origin or Sec-Fetch-Site, and a browser's session
 * cookie that is SameSite=Strict and sent only under its unguessable place.
 *
 * Each answers `{ ok: true, next }`: the "what changed" page of the write (edit-pages.ts), which
 * reads the before and after from the store, with the undo. A memory the gate did not take is an
 * error with the gate's reason, shown beside the button.
 *
 * Who may change what: an administrator any memory, acting as its owner (a user's memory as that
 * user, the agent's and shared memory as the agent); a user's token only that user's own memories;
 * the agent's token (or an open loopback server) the agent's and shared memory.
 */
import type { Context, Hono } from 'hono'
import { z } from 'zod'
import { ENGRAM_KINDS } from '../../../core/engram.ts'
import { EngramError, ErrorCode } from '../../../core/errors.ts'
import { canSee, type Owner, userOfOwner } from '../../../core/owner.ts'
import { locateMemoryPath } from '../../../memory/tree/memory-paths.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import { forgettableOwners } from '../../../tools/forget-targets.ts'
import { type MemoryChange, memoryIdOf, pathOfMemoryId } from '../../../tools/memories.ts'
import { browserRequestOf } from '../browser-session.ts'
import { actingUser, jsonBody, parseWith, type ServeEnv, userError, userField } from '../support.ts'

/** What the "what changed" page says happened. */
export const CHANGE_ACTIONS = ['added', 'edited', 'corrected', 'forgotten', 'restored', 'undone'] as const
export type ChangeAction = (typeof CHANGE_ACTIONS)[number]

const text = z.string().trim().min(1).max(2000)
const memoryId = z.string().trim().min(1).max(4000)

const addSchema = z.object({ text, kind: z.enum(ENGRAM_KINDS), user: z.preprocess((value) => (value === '' ? undefined : value), userField) })
const updateSchema = z.object({ id: memoryId, text, user: userField })
const forgetSchema = z.object({ id: memoryId, reason: z.string().trim().min(1).max(500).optional(), user: userField })
const restoreSchema = z.object({ id: memoryId, user: userField })
const undoSchema = z.object({ before: memoryId.optional(), after: memoryId.optional(), user: userField }).refine((body) => body.before !== undefined || body.after !== undefined, { message: 'name the change: before, after or both' })

/** Whose memory an id names (its path's owner); `not_found` for what is not an id of a memory. */
function ownerOfId(mind: MindInternals, id: string): Owner {
  const path = pathOfMemoryId(id)
  try {
    return locateMemoryPath(path.slice(0, path.indexOf('#')), mind.layout).owner
  } catch {
    throw userError(ErrorCode.notFound, `No memory has the id ${id}.`, 'open the memory from the Edit page and try again')
  }
}

function whoseWords(owner: Owner): string {
  const user = userOfOwner(owner)
  return user !== undefined ? `${user}'s memory` : owner === 'agent' ? "the agent's own memory" : 'shared memory'
}

/**
 * The user a change of memory `id` is made as: an administrator acts as the memory's owner; anyone
 * else as their own user, and only on memories they own. Another user's memory is not found (its
 * existence is not the caller's to learn, as in the memory API); the agent's, seen by a user, is
 * refused with why and the fix.
 */
export function actorOf(c: Context<ServeEnv>, mind: MindInternals, id: string, requested: string | undefined): string | undefined {
  const principal = c.get('principal')
  const asked = actingUser(principal, requested)
  const owner = ownerOfId(mind, id)
  if (principal.admin) return userOfOwner(owner)
  const viewer = mind.scope(asked).viewer
  if (!canSee(viewer, { owner, agent: owner === 'shared' ? undefined : mind.agent })) throw userError(ErrorCode.notFound, `No memory has the id ${id}.`, 'open the memory from the Edit page and try again')
  if (!forgettableOwners(viewer).includes(owner)) {
    const who = asked === undefined ? "The agent's token" : `The token of user ${asked}`
    throw userError(ErrorCode.accessDenied, `This is ${whoseWords(owner)}. ${who} changes only ${asked === undefined ? "the agent's and shared" : `${asked}'s own`} memories.`, "ask an administrator (a token configured as TOKEN=admin in serve.tokens) to change it", { owner })
  }
  return asked
}

/** The address of the "what changed" page, kept at the browser's place (decision 0051). */
function changedPage(c: Context<ServeEnv>, action: ChangeAction, change: { before?: string | undefined; after?: string | undefined; user?: string | undefined }): string {
  const query = new URLSearchParams({ action })
  if (change.before !== undefined) query.set('before', change.before)
  if (change.after !== undefined) query.set('after', change.after)
  if (change.user !== undefined) query.set('user', change.user)
  return `${browserRequestOf(c)?.base ?? ''}/edit/changed?${query}`
}

/** A write the gate did not take: nothing changed, and why, as an error beside the button. */
function notTaken(change: MemoryChange, c: Context<ServeEnv>, user: string | undefined): { next: string } {
  if (change.event === 'pending') {
    const query = user !== undefined && c.get('principal').admin ? `?user=${encodeURIComponent(user)}` : ''
    return { next: `${browserRequestOf(c)?.base ?? ''}/confirmations${query}` }
  }
  if (change.event === 'suppressed') throw userError(ErrorCode.invalidArgument, 'Nothing was written: memory mode is off.', 'turn memory on (memory.mode, ENGRAM_MEMORY_MODE) and try again')
  throw userError(ErrorCode.invalidArgument, `The encoding gate did not take it: ${change.reason ?? 'no reason given'}. Nothing changed.`, 'correct the memory as the reason says and save again')
}

const asUser = (user: string | undefined): { user?: string } => (user === undefined ? {} : { user })

async function bodyOf<T>(c: Context<ServeEnv>, schema: z.ZodType<T>, what: string, fix: string): Promise<T> {
  return parseWith(schema, await jsonBody(c), what, fix)
}

/** The POST routes of the dashboard's write controls, on `app` (the dashboard). */
export function registerEditWrites(app: Hono<ServeEnv>, mind: MindInternals): void {
  app.post('/edit/add', async (c) => {
    const body = await bodyOf(c, addSchema, 'The memory to add', 'send {"text": "…", "kind": "lesson", "user": "optional: whose"}')
    // An administrator naming no user adds the agent's memory; a user's token adds its own.
    const user = actingUser(c.get('principal'), body.user)
    const [change] = (await mind.memories.add({ text: body.text, kind: body.kind, ...asUser(user) })).results as [MemoryChange]
    if (change.event === 'unchanged') throw userError(ErrorCode.invalidArgument, 'Nothing was added: this memory is already remembered.', 'edit the memory that says it, from the Edit page')
    if (change.event !== 'added') return c.json({ ok: true, ...notTaken(change, c, user) })
    return c.json({ ok: true, next: changedPage(c, 'added', { after: change.id, user }) })
  })

  app.post('/edit/update', async (c) => {
    const body = await bodyOf(c, updateSchema, 'The edit', 'send {"id": "mem_…", "text": "the memory as it should read now"}')
    const user = actorOf(c, mind, body.id, body.user)
    const change = await mind.memories.update(body.id, body.text, asUser(user))
    if (change.event === 'unchanged') throw userError(ErrorCode.invalidArgument, 'Nothing changed: the new text says what the memory already says.', 'change the text, or leave the page')
    if (change.event !== 'updated') return c.json({ ok: true, ...notTaken(change, c, user) })
    // A user's profile fact is corrected (its key's new value); anything else edited.
    const action = change.kind === 'profile' && userOfOwner(change.owner) !== undefined ? 'corrected' : 'edited'
    return c.json({ ok: true, next: changedPage(c, action, { before: body.id, after: change.id, user }) })
  })

  app.post('/edit/forget', async (c) => {
    const body = await bodyOf(c, forgetSchema, 'The forget request', 'send {"id": "mem_…", "reason": "optional: why"}')
    const user = actorOf(c, mind, body.id, body.user)
    await mind.memories.delete(body.id, { ...asUser(user), ...(body.reason !== undefined ? { reason: body.reason } : {}) })
    return c.json({ ok: true, next: changedPage(c, 'forgotten', { before: body.id, user }) })
  })

  app.post('/edit/restore', async (c) => {
    const body = await bodyOf(c, restoreSchema, 'The restore request', 'send {"id": "mem_…"} of a forgotten memory')
    const user = actorOf(c, mind, body.id, body.user)
    const restored = await mind.restore(pathOfMemoryId(body.id), asUser(user))
    return c.json({ ok: true, next: changedPage(c, 'restored', { after: memoryIdOf(restored.path), user }) })
  })

  // Undo is the change the other way: what the change made is forgotten (archived, restorable),
  // then what it took away is restored — in that order, so a failure between leaves both in the
  // archive, never one of them nowhere.
  app.post('/edit/undo', async (c) => {
    const body = await bodyOf(c, undoSchema, 'The undo', 'send {"before": "mem_…", "after": "mem_…"} as the "what changed" page names them')
    const user = actorOf(c, mind, (body.after ?? body.before) as string, body.user)
    if (body.before !== undefined && body.after !== undefined && actorOf(c, mind, body.before, body.user) !== user) {
      throw userError(ErrorCode.invalidArgument, 'The two sides of this change belong to different owners.', 'undo each from the Archive or the Edit page')
    }
    if (body.after !== undefined) await mind.memories.delete(body.after, { ...asUser(user), reason: 'undone from the dashboard' })
    if (body.before !== undefined) await mind.restore(pathOfMemoryId(body.before), asUser(user))
    return c.json({ ok: true, next: changedPage(c, 'undone', { before: body.after, after: body.before, user }) })
  })
}

/** Whether `error` is the refusal of a memory that is not (or no longer) there. */
export function isNotFound(error: unknown): boolean {
  return EngramError.is(error) && error.code === ErrorCode.notFound
}
