/**
 * What a session of a user is given, read over HTTP (decision 0038): what priming would inject for
 * a message (`POST /v1/recall`, the dashboard's "why" view), the memory context and working state
 * (`GET /v1/context`), and a past turn's stored provenance (`GET /v1/turns/{session}/{turn}`). Each
 * calls what a session calls, as the caller's user; nothing here ranks or assembles on its own.
 */
import { z } from 'zod'
import { checkLength } from '../../config/limits.ts'
import { ErrorCode } from '../../core/errors.ts'
import { checkDerivedSessionId } from '../../core/session-ids.ts'
import { createResolutionReader } from '../../memory/episodes/resolutions.ts'
import { buildWorkingState } from '../../memory/episodes/working-state.ts'
import type { MindInternals } from '../../mind-internals.ts'
import type { ApiRoutes, RequestPart } from './openapi.ts'
import { actingUser, sessionField, userError, userField } from './support.ts'

/**
 * Throws `access_denied` when `session` was first opened with a user other than `user` (a session id
 * belongs to the user it was first opened with), or is an id the interfaces derive for another user
 * (`mcp:<user>`, `http:<user>`: reserved before its first use, decision 0054).
 */
export async function checkSessionOwner(mind: MindInternals, session: string, user: string | undefined): Promise<void> {
  checkDerivedSessionId(session, user)
  const record = await mind.sessions.get(session)
  if (record && record.user !== undefined && record.user !== user) {
    throw userError(ErrorCode.accessDenied, `Session ${JSON.stringify(session)} is another user's conversation.`, 'use a session id of your own')
  }
}

const recallBodySchema = z.object({
  message: z.string().min(1).describe('the message priming is computed for'),
  user: userField.describe("whose memories (default: the token's user; another user only with an administrator's token)"),
  session: sessionField.optional().describe("a session of the caller's: its own recent messages are left out of recent activity, as in a turn of it"),
  inspect: z.boolean().optional().describe('true: a look, not a recall — what is injected is not counted as accessed (default false: as a turn, it counts)'),
})
const RECALL_FIX = 'send {"message": "the user\'s message", "session": "optional, one of yours"}'
const recallBody = { schema: recallBodySchema, what: 'The recall request', fix: RECALL_FIX }

/** The query of a GET that reads a user's memories: `?user=`, passed to `actingUser`. */
export const userQuery = {
  schema: z.object({
    user: userField.describe("whose memories (default: the token's user; another user only with an administrator's token)"),
  }),
  what: 'The query',
  fix: "leave user out, or pass ?user=<id> (only with an administrator's token)",
} satisfies RequestPart<z.ZodType>

const turnParams = {
  schema: z.object({
    session: sessionField.describe('the session id'),
    turn: z.coerce.number().int().min(1).describe('the turn number /v1/turns/begin returned'),
  }),
  what: 'The turn',
  fix: 'ask for /v1/turns/<session>/<turn number>, as /v1/turns/begin returned them',
} satisfies RequestPart<z.ZodType>

/** `/v1/recall`, `/v1/context`, `/v1/turns/{session}/{turn}` on `api`. */
export function addMemoryRoutes(api: ApiRoutes, mind: MindInternals): void {
  // The registry the session reads "Recently resolved" from (one file of the home).
  const resolutions = createResolutionReader(mind.layout.resolutionsFile, 'shared/resolutions.jsonl')

  api.add(
    {
      method: 'post',
      path: '/v1/recall',
      summary: 'What priming would inject before a turn with this message, and why',
      returns: 'recall: the primer\'s result (text, type, budget, tokens, injected items with channel, source, provenance and score terms, warnings) and the channel shares of its budget; as a turn does, it records access of what it injects unless inspect is true',
      body: recallBody,
    },
    async (c, { body }) => {
      const user = actingUser(c.get('principal'), body.user)
      checkLength('messageChars', 'The message', body.message, mind.config.values.limits.messageChars)
      if (body.session !== undefined) await checkSessionOwner(mind, body.session, user)
      const scope = mind.scope(user)
      // The arguments of session.begin's priming: the profile is the memory context's, not priming's.
      const primed = await mind.primer.prime({
        message: body.message,
        viewer: scope.viewer,
        activity: scope.view.activity,
        procedures: scope.procedures,
        skipProfile: true,
        ...(body.session !== undefined ? { sessionId: body.session } : {}),
        ...(body.inspect === true ? { inspect: true } : {}),
      })
      return c.json({ ok: true, user: user ?? null, recall: { ...primed, shares: mind.primer.settings.shares[primed.type] } })
    },
  )

  api.add(
    {
      method: 'get',
      path: '/v1/context',
      summary: "The memory context (identity, rules, lessons) and working state a session of the user gets",
      returns: 'context: {text, sections} as the system prompt\'s memory part; state: {text, sections}, the current task and recently resolved issues',
      query: userQuery,
    },
    async (c, { query }) => {
      const user = actingUser(c.get('principal'), query.user)
      const scope = mind.scope(user)
      const [context, state] = await Promise.all([
        scope.memory.buildContext(),
        buildWorkingState({ documents: scope.view.own.documents, resolutions, ...(user !== undefined ? { user } : {}) }, { now: mind.clock.now() }),
      ])
      return c.json({ ok: true, user: user ?? null, context, state })
    },
  )

  api.add(
    {
      method: 'get',
      path: '/v1/turns/:session/:turn',
      summary: "A past turn's stored provenance: what it was given, from where, and why",
      returns: 'turn: session, number, user, message id, reply ids, start, message type, provenance (primed items, memory sections, budgets)',
      params: turnParams,
      query: userQuery,
    },
    async (c, { params, query }) => {
      const user = actingUser(c.get('principal'), query.user)
      const stored = await mind.turnProvenance({ sessionId: params.session, turn: params.turn })
      // Another user's turn is answered as one that does not exist.
      if (!stored || stored.user !== user) throw userError(ErrorCode.notFound, `Session ${JSON.stringify(params.session)} has no turn ${params.turn} of this caller.`, 'ask for a turn of your own sessions, with the session id and number /v1/turns/begin returned')
      return c.json({ ok: true, turn: stored })
    },
  )
}
