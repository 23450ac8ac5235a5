/**
 * What every route of `engram serve` shares (decision 0038): the app's environment (who the
 * request acts for), the one answer shape for errors, body parsing against the tools' zod schemas,
 * and the rule for naming a user.
 */
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { z } from 'zod'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { findMalformedText, nameProblem, WELL_FORMED_FIX } from '../../core/well-formed-text.ts'
import type { EngramTool, ToolResult } from '../../tools/tool.ts'
import type { Principal } from './credentials.ts'

/** The Hono environment of every route: the principal the request acts for, set by the app's middleware. */
export type ServeEnv = { Variables: { principal: Principal } }

const STATUS_OF: Record<string, ContentfulStatusCode> = {
  [ErrorCode.invalidArgument]: 400,
  [ErrorCode.pathOutsideMemory]: 400,
  [ErrorCode.unauthorized]: 401,
  [ErrorCode.accessDenied]: 403,
  [ErrorCode.notFound]: 404,
  [ErrorCode.limitExceeded]: 413,
  [ErrorCode.unsupported]: 501,
  [ErrorCode.llmNotConfigured]: 501,
  [ErrorCode.llmCallFailed]: 502,
  [ErrorCode.llmInvalidOutput]: 502,
  [ErrorCode.embedFailed]: 502,
  [ErrorCode.lockBusy]: 503,
  [ErrorCode.storageUnavailable]: 503,
  [ErrorCode.llmTimeout]: 504,
}

/** The HTTP status of an error code (500 for the ones that are the server's problem). */
export function httpStatusOf(code: string): ContentfulStatusCode {
  return STATUS_OF[code] ?? 500
}

/** The error answer: `{ ok: false, error: { code, message, fix } }` with the code's status. */
export function failure(c: Context, code: ErrorCode, message: string, fix: string, extra: Record<string, string> = {}): Response {
  for (const [name, value] of Object.entries(extra)) c.header(name, value)
  return c.json({ ok: false, error: { code, message, fix } }, httpStatusOf(code))
}

/** A caller's mistake, thrown from a route and answered by the app's error handler. */
export function userError(code: ErrorCode, message: string, fix: string, details?: Record<string, unknown>): EngramError {
  return new EngramError({ code, category: 'user', message, fix, ...(details ? { details } : {}) })
}

/** Zod issues as one readable message, as the tools word them. */
function issuesMessage(what: string, issues: readonly z.core.$ZodIssue[]): string {
  return [`${what} is not valid:`, ...issues.map((issue) => `- ${issue.path.join('.') || 'body'}: ${issue.message}`)].join('\n')
}

/**
 * Refuses `input` (a body, the path's parameters, the query) when a string in it is not text a store
 * keeps as sent — a NUL, a lone surrogate (decision 0055) — as `invalid_argument` naming the field:
 * PostgreSQL would answer a NUL with a server error, and both stores turn half a character into
 * U+FFFD.
 */
export function requireWellFormed(input: unknown, what: string): void {
  const malformed = findMalformedText(input)
  if (malformed) throw userError(ErrorCode.invalidArgument, `${what} is not valid:\n- ${malformed.path || 'body'}: holds ${malformed.problem}`, WELL_FORMED_FIX, { field: malformed.path })
}

/** `input` checked against `schema`, or `invalid_argument` listing what is wrong and `fix`. */
export function parseWith<T>(schema: z.ZodType<T>, input: unknown, what: string, fix: string): T {
  requireWellFormed(input, what)
  const parsed = schema.safeParse(input)
  if (!parsed.success) throw userError(ErrorCode.invalidArgument, issuesMessage(what, parsed.error.issues), fix)
  return parsed.data
}

/** An id names a user or a session in every store and file name: no control characters either. */
function idText() {
  return z
    .string()
    .trim()
    .min(1)
    .max(200)
    .superRefine((value, context) => {
      const problem = nameProblem(value)
      if (problem) context.addIssue({ code: 'custom', message: `an id cannot hold ${problem}` })
    })
}

/** A user id in a request. */
export const userId = idText()
/** The optional `user` field of a request body or query. */
export const userField = userId.optional()
/** A session id in a request. */
export const sessionField = idText()

/**
 * The user a request acts for: the credential's own, unless an administrator names another. A
 * credential for one user (or the agent alone) naming someone else is refused.
 */
export function actingUser(principal: Principal, requested: string | undefined): string | undefined {
  if (requested === undefined || requested === principal.user) return principal.user
  if (principal.admin) return requested
  throw userError(
    ErrorCode.accessDenied,
    `This credential acts for ${principal.user === undefined ? 'the agent alone (no user)' : `user ${JSON.stringify(principal.user)}`} and cannot act for ${JSON.stringify(requested)}.`,
    "leave \"user\" out (the credential's own user is used), or use that user's token or an administrator's",
    { requested },
  )
}

/** The agent tool named `name` (every mind has them all). */
export function toolNamed(tools: EngramTool[], name: string): EngramTool {
  const tool = tools.find((candidate) => candidate.name === name)
  if (!tool) throw new Error(`agent tool ${name} is missing`)
  return tool
}

/**
 * A tool's error result as an EngramError: its `error`'s code, message and fix (a result without
 * one, memorize refusing every entry, is its text). A tool's own failure (`internal`) is answered
 * as `invalid_argument`, as the tools word it: retry, or correct the request.
 */
export function toolFailure(result: ToolResult): EngramError {
  const data = result.data
  const error = result.error
  const code = error !== undefined && error.code !== ErrorCode.internal ? error.code : ErrorCode.invalidArgument
  const fix = error?.fix ?? 'correct the request and send it again'
  return userError(code, error?.message ?? result.text, fix, data && typeof data === 'object' ? { result: data } : undefined)
}

/** The request body as a JSON object, or `invalid_argument` saying what to send. */
export async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  let body: unknown
  try {
    body = await c.req.json()
  } catch {
    throw userError(ErrorCode.invalidArgument, 'The request body is not valid JSON.', 'send a JSON object with Content-Type: application/json')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw userError(ErrorCode.invalidArgument, 'The request body must be a JSON object.', 'send a JSON object, e.g. {"query": "…"}')
  requireWellFormed(body, 'The request body')
  return body as Record<string, unknown>
}
