/**
 * The plain memory API over HTTP (`/v1/memories…`, decision 0065): `mind.memories` route by route,
 * each call for the caller's user (a user's token reaches only its user; another user's id is not
 * found), as the other routes act. Changes are POSTs like `/v1/forget`: the route table speaks GET
 * and POST.
 */
import { z } from 'zod'
import { CONFIDENCES, ENGRAM_KINDS } from '../../core/engram.ts'
import type { MindInternals } from '../../mind-internals.ts'
import type { ApiRoutes, RequestPart } from './openapi.ts'
import { actingUser, userField } from './support.ts'

const WHOSE = "whose memories (default: the token's user; another user only with an administrator's token)"
const USER_FIX = "leave user out, or pass user only with an administrator's token"

const idParams = {
  schema: z.object({ id: z.string().trim().min(1).max(4000).describe('the id add, search or the list gave the memory') }),
  what: 'The memory id',
  fix: 'use an id that POST /v1/memories, /v1/memories/search or GET /v1/memories returned',
} satisfies RequestPart<z.ZodType>

const userQuery = { schema: z.object({ user: userField.describe(WHOSE) }), what: 'The query', fix: USER_FIX } satisfies RequestPart<z.ZodType>

const text = z.string().trim().min(1).max(2000)
const addBody = {
  schema: z.object({
    text: z.union([text, z.array(text).min(1).max(50)]).optional().describe('the memory, or a list of them: one line of plain text each'),
    messages: z
      .array(z.object({ role: z.string().min(1).max(40), content: z.string().max(100_000), at: z.string().max(40).optional().describe('when it was said (ISO 8601): dates the events the user reports in it') }))
      .min(1)
      .max(200)
      .optional()
      .describe("instead of text, a conversation: the facts the user states in it are extracted (by the model when one is configured, else by rules) and stored through the same gate; only the user's messages are read"),
    kind: z.enum(ENGRAM_KINDS).optional().describe('always / never / when: a rule; lesson (default): a fact; profile: a fact about the user ("Key: value")'),
    confidence: z.enum(CONFIDENCES).optional().describe("high (default); in copilot mode anything less waits for the user's yes (POST /v1/confirmations/{id}/accept)"),
    user: userField.describe(WHOSE),
  }).refine((body) => (body.text === undefined) !== (body.messages === undefined), { message: 'send text or messages, one of them' }),
  what: 'The memories to add',
  fix: 'send {"text": "Ada takes her tea without sugar", "kind": "lesson"}, {"text": ["…", "…"]} or {"messages": [{"role": "user", "content": "…"}]}',
} satisfies RequestPart<z.ZodType>

const searchBody = {
  schema: z.object({
    query: z.string().trim().min(1).max(2000).describe('what to look for'),
    limit: z.number().int().min(1).max(50).optional().describe('most results (default 10)'),
    kinds: z.array(z.enum(ENGRAM_KINDS)).min(1).optional().describe('only these kinds'),
    user: userField.describe(WHOSE),
  }),
  what: 'The search',
  fix: 'send {"query": "tea", "limit": 5}',
} satisfies RequestPart<z.ZodType>

const listQuery = {
  schema: z.object({
    user: userField.describe(WHOSE),
    kind: z.enum(ENGRAM_KINDS).optional().describe('only memories of this kind'),
    limit: z.coerce.number().int().min(1).max(1000).optional().describe('a page of at most this many (default 100)'),
    offset: z.coerce.number().int().min(0).optional().describe('where the page starts: the nextOffset of the page before'),
  }),
  what: 'The query',
  fix: 'pass ?kind=lesson&limit=100&offset=0 (each optional)',
} satisfies RequestPart<z.ZodType>

const updateBody = {
  schema: z.object({ text: text.describe('the new text'), user: userField.describe(WHOSE) }),
  what: 'The update',
  fix: 'send {"text": "the memory as it should read now"}',
} satisfies RequestPart<z.ZodType>

const deleteBody = {
  schema: z.object({
    purge: z.boolean().optional().describe('delete for real, archived copies included; default: forgotten (archived, restorable with /v1/restore)'),
    reason: z.string().trim().min(1).max(500).optional().describe('why, kept with the archived copy'),
    user: userField.describe(WHOSE),
  }),
  what: 'The delete',
  fix: 'send {} to forget it, or {"purge": true} to delete it for real',
} satisfies RequestPart<z.ZodType>

const asUser = (user: string | undefined): { user?: string } => (user === undefined ? {} : { user })

/** `/v1/memories…` on `api`. */
export function addMemoriesRoutes(api: ApiRoutes, mind: MindInternals): void {
  api.add(
    { method: 'post', path: '/v1/memories', summary: 'Add memories through the write path and its gate (mind.memories.add)', returns: 'results: per memory its event (added, unchanged, pending, rejected, suppressed), id, text, kind, owner, reason; for messages also method (rules or model) and degraded when the model failed', body: addBody },
    async (c, { body }) => {
      const user = actingUser(c.get('principal'), body.user)
      const added =
        body.messages !== undefined
          ? await mind.memories.add({ messages: body.messages, ...asUser(user) })
          : await mind.memories.add({ text: body.text ?? [], ...(body.kind ? { kind: body.kind } : {}), ...(body.confidence ? { confidence: body.confidence } : {}), ...asUser(user) })
      return c.json({ ok: true, ...added })
    },
  )
  api.add(
    { method: 'post', path: '/v1/memories/search', summary: 'Memories that match a query, best first (mind.memories.search)', returns: 'memories: [{id, text, kind, owner, path, score, provenance, createdAt?, source?}]', body: searchBody },
    async (c, { body }) => {
      const user = actingUser(c.get('principal'), body.user)
      const memories = await mind.memories.search(body.query, { ...asUser(user), ...(body.limit ? { limit: body.limit } : {}), ...(body.kinds ? { kinds: body.kinds } : {}) })
      return c.json({ ok: true, memories })
    },
  )
  api.add(
    { method: 'get', path: '/v1/memories', summary: 'The memories the caller sees, a page at a time (mind.memories.getAll)', returns: 'memories: [{id, text, kind, owner, path, createdAt?, source?}], total, nextOffset when there is a next page', query: listQuery },
    async (c, { query }) => {
      const user = actingUser(c.get('principal'), query.user)
      const page = await mind.memories.getAll({ ...asUser(user), ...(query.kind ? { kinds: [query.kind] } : {}), ...(query.limit ? { limit: query.limit } : {}), ...(query.offset ? { offset: query.offset } : {}) })
      return c.json({ ok: true, ...page })
    },
  )
  api.add(
    { method: 'get', path: '/v1/memories/:id', summary: 'One memory by id (mind.memories.get); another user\'s is not found', returns: 'memory: {id, text, kind, owner, path, createdAt?, source?}', params: idParams, query: userQuery },
    async (c, { params, query }) => {
      const user = actingUser(c.get('principal'), query.user)
      return c.json({ ok: true, memory: await mind.memories.get(params.id, asUser(user)) })
    },
  )
  api.add(
    { method: 'post', path: '/v1/memories/:id/update', summary: 'Replace a memory\'s text: written through the gate, the old text forgotten (mind.memories.update)', returns: 'result: {event (updated, unchanged, pending, rejected), id (the new id), text, kind, owner}', params: idParams, body: updateBody },
    async (c, { params, body }) => {
      const user = actingUser(c.get('principal'), body.user)
      return c.json({ ok: true, result: await mind.memories.update(params.id, body.text, asUser(user)) })
    },
  )
  api.add(
    { method: 'post', path: '/v1/memories/:id/delete', summary: 'Forget a memory (archived, restorable), or with purge delete it for real (mind.memories.delete)', returns: 'deleted: what was done (action, path, archive, owner, units removed), as /v1/forget reports it', params: idParams, body: deleteBody },
    async (c, { params, body }) => {
      const user = actingUser(c.get('principal'), body.user)
      const outcome = await mind.memories.delete(params.id, { ...asUser(user), ...(body.purge ? { purge: true } : {}), ...(body.reason ? { reason: body.reason } : {}) })
      return c.json({ ok: true, deleted: outcome })
    },
  )
  api.add(
    { method: 'get', path: '/v1/memories/:id/history', summary: 'How a memory changed (mind.memories.history): versions of knowledge and procedure documents', returns: 'history: the document\'s state, lineage and earlier versions with their reasons', params: idParams, query: userQuery },
    async (c, { params, query }) => {
      const user = actingUser(c.get('principal'), query.user)
      return c.json({ ok: true, history: await mind.memories.history(params.id, asUser(user)) })
    },
  )
}
