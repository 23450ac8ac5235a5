/**
 * Calling `createServeApp`'s app as a client would, through `app.request()` (no socket): the
 * tokens of the API tests (ada and bob of agent default, the agent alone, an administrator), a
 * request with a bearer token and a JSON body, and the checks of the one answer shape.
 */
import assert from 'node:assert/strict'
import { createServeApp } from '../../src/interfaces/http/app.ts'
import { parseCredentials } from '../../src/interfaces/http/credentials.ts'
import type { CreateMindOptions } from '../../src/mind.ts'
import { openMindInternals, type MindInternals } from '../../src/mind-internals.ts'
import { makeTempHome } from '../../src/testing/temp-home.ts'

export const ADA = 'ada-token-0123456789abcdef'
export const BOB = 'bob-token-0123456789abcdef'
export const AGENT = 'agent-token-0123456789abcd'
export const ADMIN = 'admin-token-0123456789abcd'
/** `serve.tokens` for them. */
export const TOKENS = `${ADA}=default:ada, ${BOB}=default:bob, ${AGENT}=default, ${ADMIN}=admin`

export type App = ReturnType<typeof createServeApp>

export interface ServeHome {
  mind: MindInternals
  app: App
  close(): Promise<void>
}

/** A mind on a temp home and the app over it with TOKENS; `close()` closes the mind and removes the home. */
export async function openServeHome(settings?: CreateMindOptions["settings"]): Promise<ServeHome> {
  const temp = makeTempHome()
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ...(settings !== undefined ? { settings } : {}) })
  return {
    mind,
    app: createServeApp({ mind, credentials: parseCredentials(TOKENS) }),
    async close() {
      await mind.close()
      temp.cleanup()
    },
  }
}
// biome-ignore lint/suspicious/noExplicitAny: the answers are JSON of many shapes; each test reads the fields it checks.
export type Json = any
export interface Answer {
  status: number
  body: Json
}

/** One request to `app` from 127.0.0.1: `body` as JSON (or `raw` as it is), `token` as a bearer. */
export async function call(app: App, method: string, path: string, options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { host: '127.0.0.1:7477', ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  let body: string | undefined
  if (options.raw !== undefined || options.body !== undefined) {
    body = options.raw ?? JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await app.request(path, { method, headers, ...(body !== undefined ? { body } : {}) })
  return { status: response.status, body: await response.json() }
}

/** The answer is the error shape with `status` and `code`, a message and a fix. */
export function assertError(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body))
  assert.equal(answer.body.ok, false)
  assert.equal(answer.body.error.code, code)
  assert.ok(typeof answer.body.error.message === 'string' && answer.body.error.message.length > 0)
  assert.ok(typeof answer.body.error.fix === 'string' && answer.body.error.fix.length > 0, 'every error names its fix')
}

/** The answer is 200 and `ok: true`; returns its body. */
export function assertOk(answer: Answer): Json {
  assert.equal(answer.status, 200, JSON.stringify(answer.body))
  assert.equal(answer.body.ok, true)
  return answer.body
}
