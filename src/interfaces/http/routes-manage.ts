/**
 * A person managing their memory over HTTP (decision 0038): pending confirmations and their
 * answer (`mind.confirm`, as `engram confirm`), forgetting and restoring (`mind.forget` /
 * `mind.restore`, as `engram forget` / `engram restore` and the forget_memory tool), and an export
 * (`mind.exportUser` / `exportMemory`, as `engram export`). Each acts as the caller's user only.
 * Erasing a whole user (`mind.forgetUser`, as `engram forget --user ID --purge`) is an
 * administrator's (decision 0044, addendum).
 */
import { isUtf8 } from 'node:buffer'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { z } from 'zod'
import { ErrorCode } from '../../core/errors.ts'
import { exportMemory } from '../../memory/portability/export-memory.ts'
import type { MindInternals } from '../../mind-internals.ts'
import { forgetMemoryInputSchema } from '../../tools/forget-memory-tool.ts'
import { ENGRAM_VERSION } from '../cli/version.ts'
import type { ApiRoutes } from './openapi.ts'
import { userQuery } from './routes-memory.ts'
import { actingUser, userError, userField, userId } from './support.ts'

const WHOSE = "whose memories (default: the token's user; another user only with an administrator's token)"

const decisionBodySchema = z.object({ user: userField.describe(WHOSE) })
const confirmationParamsSchema = z.object({ id: z.string().trim().min(1).max(100).describe('the id GET /v1/confirmations listed') })

const forgetBodySchema = forgetMemoryInputSchema.extend({
  purge: z.boolean().optional().describe('delete for real, archived copies included (logged without its text); default: move to archive/forgotten/, restorable'),
  user: userField.describe(WHOSE),
})
const FORGET_FIX = 'send {"target": "the memory\'s text as search shows it, or a path like knowledge/<name>.md", "reason": "optional", "purge": false}'

const restoreBodySchema = z.object({
  target: z.string().trim().min(1).max(2000).describe('what /v1/forget reported: the path (knowledge/tea.md), the archived path with its id (archive/forgotten/rules.md#<id>), or the text'),
  user: userField.describe(WHOSE),
})
const RESTORE_FIX = 'send {"target": "knowledge/tea.md"} or {"target": "archive/forgotten/rules.md#<id>"}, as /v1/forget reported it'

const eraseParamsSchema = z.object({ user: userId.describe('the user whose memories are erased') })
const eraseBodySchema = z.object({
  purge: z.literal(true).describe('must be true: a whole user is deleted for real (no archive); export it first (GET /v1/export?user=ID) if it is wanted'),
})
const ERASE_FIX = 'send {"purge": true} to delete everything the user owns for real; export it first (GET /v1/export?user=ID) if it is wanted'

/** One file of an export: text as it is, anything else in base64. */
interface ExportedFile {
  path: string
  content: string
  encoding?: 'base64'
}

async function exportedFile(dir: string, path: string): Promise<ExportedFile> {
  const bytes = await readFile(join(dir, path))
  return isUtf8(bytes) ? { path, content: bytes.toString('utf8') } : { path, content: bytes.toString('base64'), encoding: 'base64' }
}

/** The files under `dir`, as paths relative to it with forward slashes, sorted. */
async function filePaths(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const paths = entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'))
  return paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * The export's answer, `{ ...head, files: [...] }`, streamed one file at a time as the client reads
 * it: a server holds one file of an export in memory, not the whole memory tree twice over (as text
 * and as its JSON). `scratch` (the export written to disk) is removed once the last file is sent,
 * or when the client goes away. A file that cannot be read mid-way ends the stream with an error:
 * the client gets JSON that does not parse, never a partial export that looks whole.
 */
function streamedExport(head: Record<string, unknown>, dir: string, scratch: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let paths: string[] | undefined
  let next = 0
  const cleanup = (): Promise<void> => rm(scratch, { recursive: true, force: true })
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (paths === undefined) {
          paths = await filePaths(dir)
          controller.enqueue(encoder.encode(`${JSON.stringify(head).slice(0, -1)},"files":[`))
          return
        }
        const path = paths[next]
        if (path !== undefined) {
          controller.enqueue(encoder.encode(`${next > 0 ? ',' : ''}${JSON.stringify(await exportedFile(dir, path))}`))
          next++
          return
        }
        controller.enqueue(encoder.encode(']}'))
        await cleanup()
        controller.close()
      } catch (error) {
        await cleanup()
        controller.error(error)
      }
    },
    cancel: cleanup,
  })
}

/** `/v1/confirmations…`, `/v1/forget`, `/v1/restore`, `/v1/export`, `/v1/users/:user/erase` on `api`. */
export function addManageRoutes(api: ApiRoutes, mind: MindInternals): void {
  api.add(
    {
      method: 'get',
      path: '/v1/confirmations',
      summary: 'Memories waiting for the user\'s yes or no (copilot mode)',
      returns: 'pending: [{id, reason, engram?: {kind, text, scope, owner, …}, document?: {path, owner, content, mode}}]',
      query: userQuery,
    },
    async (c, { query }) => {
      const user = actingUser(c.get('principal'), query.user)
      const pending = await mind.pendingConfirmations(user !== undefined ? { user } : {})
      return c.json({ ok: true, user: user ?? null, pending })
    },
  )

  for (const answer of ['accept', 'reject'] as const) {
    api.add(
      {
        method: 'post',
        path: `/v1/confirmations/:id/${answer}`,
        summary: answer === 'accept' ? 'Save a pending memory (encoded, or its memory file written)' : 'Drop a pending memory',
        returns: 'accepted: the confirmations saved or already known, saved: how many were written, rejected: how many were dropped',
        params: { schema: confirmationParamsSchema, what: 'The confirmation', fix: 'use an id GET /v1/confirmations listed' },
        body: { schema: decisionBodySchema, what: `The ${answer}`, fix: 'send {} (or {"user": "<id>"} with an administrator\'s token)' },
      },
      async (c, { params: { id }, body }) => {
        const user = actingUser(c.get('principal'), body.user)
        // Only the caller's own queue is looked in: another user's id is as unknown as a guessed one.
        const pending = await mind.pendingConfirmations(user !== undefined ? { user } : {})
        if (!pending.some((item) => item.id === id)) throw userError(ErrorCode.notFound, `No pending confirmation of this caller has the id ${JSON.stringify(id)}.`, 'list them with GET /v1/confirmations and use one of their ids')
        const outcome = await mind.confirm({ ...(answer === 'accept' ? { accept: [id] } : { reject: [id] }), ...(user !== undefined ? { user } : {}) })
        const problem = outcome.problems.find((item) => item.id === id)
        // Answered once what was saved is in the index: a search right after the yes finds it.
        await mind.indexed()
        if (problem) throw userError(ErrorCode.invalidArgument, `Confirmation ${id} could not be saved: ${problem.reason}`, 'it stays pending: reject it, or fix what the reason names and accept it again')
        return c.json({ ok: true, accepted: outcome.accepted, saved: outcome.saved, rejected: outcome.rejected })
      },
    )
  }

  api.add(
    {
      method: 'post',
      path: '/v1/forget',
      summary: 'Forget one memory: moved to archive/forgotten/ (restorable), or with purge deleted for real',
      returns: 'forgotten: what was done (action, path, archive, text, units removed), as engram forget --json reports it',
      body: { schema: forgetBodySchema, what: 'The forget request', fix: FORGET_FIX },
    },
    async (c, { body }) => {
      const user = actingUser(c.get('principal'), body.user)
      const outcome = await mind.forget(body.target, { ...(user !== undefined ? { user } : {}), ...(body.reason !== undefined ? { reason: body.reason } : {}), purge: body.purge === true })
      return c.json({ ok: true, forgotten: outcome })
    },
  )

  api.add(
    {
      method: 'post',
      path: '/v1/restore',
      summary: 'Bring a forgotten memory back into memory and the index',
      returns: 'restored: its path, the archive it came from and its text, as engram restore --json reports it',
      body: { schema: restoreBodySchema, what: 'The restore request', fix: RESTORE_FIX },
    },
    async (c, { body }) => {
      const user = actingUser(c.get('principal'), body.user)
      const outcome = await mind.restore(body.target, user !== undefined ? { user } : {})
      return c.json({ ok: true, restored: outcome })
    },
  )

  api.add(
    {
      method: 'post',
      path: '/v1/users/:user/erase',
      summary: "Erase everything a user owns, for real (engram forget --user ID --purge): memories, conversations, index units, turns, confirmations; an administrator's",
      returns: 'erased: the counts per store, agents searched, nothing: true when the user had nothing, warnings with their fix',
      // Erasing a user is an operator's act with no way back: a user's or the agent's token could be
      // in an agent's hands, and one mistaken call would take every memory of that person.
      allow: (c) => {
        if (!c.get('principal').admin) throw userError(ErrorCode.accessDenied, "Erasing a whole user deletes every memory they own, with no archive; it is an administrator's to do.", "use an administrator's token (serve.tokens TOKEN=admin); to forget one memory, POST /v1/forget")
      },
      params: { schema: eraseParamsSchema, what: 'The user to erase', fix: 'name the user in the path: /v1/users/<id>/erase' },
      body: { schema: eraseBodySchema, what: 'The erasure', fix: ERASE_FIX },
    },
    async (c, { params: { user } }) => {
      const report = await mind.forgetUser(user, { purge: true })
      return c.json({ ok: true, ...report })
    },
  )

  api.add(
    {
      method: 'get',
      path: '/v1/export',
      summary: "A user's memory as files (engram export --user), or with an administrator's token and no user the agent's whole memory tree (engram export)",
      returns: 'report: the export\'s counts and what it skipped; files: [{path, content, encoding?: "base64"}] sorted by path',
      query: userQuery,
    },
    async (c, { query }) => {
      const principal = c.get('principal')
      const user = actingUser(principal, query.user)
      // The whole tree holds every user's memories: an administrator's only, never the agent-alone
      // credential (which is also what every request of a server without tokens acts as).
      if (user === undefined && !principal.admin) throw userError(ErrorCode.accessDenied, "The export of the whole memory holds every user's memories; it is an administrator's to take.", "use an administrator's token (serve.tokens TOKEN=admin), or a user's token for that user's export")
      const scratch = await mkdtemp(join(tmpdir(), 'engram-serve-export-'))
      const dir = join(scratch, 'export')
      // Streamed from here on, the scratch folder is the stream's to remove; a failed export removes it now.
      const { dir: _written, ...rest } = await (user !== undefined
        ? mind.exportUser(user, dir)
        : exportMemory({ backend: mind.backend, agent: mind.agent, clock: mind.clock, skills: mind.skills, home: mind.home, version: ENGRAM_VERSION }, dir, { force: false })
      ).catch(async (error: unknown) => {
        await rm(scratch, { recursive: true, force: true })
        throw error
      })
      return c.body(streamedExport({ ok: true, user: user ?? null, report: rest }, dir, scratch), 200, { 'content-type': 'application/json; charset=UTF-8' })
    },
  )
}
