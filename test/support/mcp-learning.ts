/** The model and the checks of the MCP learning tests (test/mcp-learning*.test.ts). */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { FakeChatRequest, FakeChatStep, FakeOpenAiServer } from '../../src/testing/fake-openai-server.ts'

export const RULE = /## When\n- When a tool call fails twice in a row/
/** The post-mortem's lesson names the user whose failed calls it read, so a lesson in the wrong tree is seen. */
export const lessonFor = (user: string): string => `Search the memory for the exact note name before read_memory_file (learned with ${user}).`

function schemaName(request: { body: unknown }): string {
  return (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'
}

/** Post-mortems for these users hang (a model that does not answer) until they are taken out. */
export const hangingFor = new Set<string>()

export function answer(request: FakeChatRequest): FakeChatStep {
  const prompt = JSON.stringify(request.messages)
  switch (schemaName(request)) {
    case 'lessons': {
      const user = /knowledge\/(\w+)-missing/.exec(prompt)?.[1] ?? 'nobody'
      if (hangingFor.has(user)) return { hang: true }
      return { json: { lessons: [{ tool: 'read_memory_file', lesson: lessonFor(user), confidence: 'high' }] } }
    }
    case 'episode':
      return { json: { title: 'Looking for notes that were not there', summary: 'The agent tried to read three notes that do not exist.', resolved: [], newTasks: [] } }
    case 'consolidated_lessons':
      return { json: { rules: [], lessons: [] } }
    case 'identity_facts':
      return { json: { facts: [] } }
    case 'procedures':
      return { json: { procedures: [] } }
    case 'knowledge':
      return { json: { items: [] } }
    default:
      return { fail: { status: 500, body: { error: { message: `unexpected request ${schemaName(request)}` } } } }
  }
}

/** The post-mortem model calls made for `user`'s failed calls. */
export function postMortemsFor(server: FakeOpenAiServer, user: string): number {
  return server.requests.filter((request) => request.path === '/v1/chat/completions' && schemaName(request) === 'lessons' && JSON.stringify(request.body).includes(`knowledge/${user}-missing`)).length
}

export function read(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : ''
}

export async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** Three calls of one tool that fail: notes that do not exist, named for `name` (whose post-mortem reads them). */
export async function failThreeTimes(client: Client, name: string): Promise<void> {
  for (const n of [1, 2, 3]) {
    const result = await client.callTool({ name: 'read_memory_file', arguments: { path: `knowledge/${name}-missing-${n}.md` } })
    assert.equal((result as { isError?: boolean }).isError, true, JSON.stringify(result.content))
  }
}

/** An app served on a free loopback port; `close()` stops it and drops its connections. */
export async function listenOnLoopback(fetch: (request: Request) => Response | Promise<Response>): Promise<{ port: number; close(): Promise<void> }> {
  let listener: ReturnType<typeof serve> | undefined
  const port = await new Promise<number>((resolvePort) => {
    listener = serve({ fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => resolvePort(info.port))
  })
  return {
    port,
    close: () =>
      new Promise<void>((resolveClosed) => {
        listener?.close(() => resolveClosed())
        if (listener && 'closeAllConnections' in listener) listener.closeAllConnections()
      }),
  }
}
