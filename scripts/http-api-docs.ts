/**
 * docs/http-api.md, the list of `engram serve`'s routes, generated from the route table (decision
 * 0064): the OpenAPI document a real app serves at /v1/openapi.json is made from the same routes
 * the app mounts, so the list cannot drift from what is served. `npm run docs` writes it;
 * test/http-route-list.test.ts fails when it is stale.
 */
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

type JsonSchema = { properties?: Record<string, unknown>; required?: string[] }
type Operation = {
  summary: string
  security?: unknown[]
  parameters: Array<{ name: string; in: 'path' | 'query'; required: boolean }>
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } }
  responses: { '200': { description: string } }
}

/** The OpenAPI document of a serve app over a throwaway mind. */
export async function servedOpenApi(): Promise<{ paths: Record<string, Record<string, Operation>> }> {
  const temp = makeTempHome()
  const mind = await openMindInternals({ home: temp.home, env: temp.env })
  try {
    const response = await createServeApp({ mind }).request('/v1/openapi.json', { headers: { host: '127.0.0.1' } })
    return (await response.json()) as { paths: Record<string, Record<string, Operation>> }
  } finally {
    await mind.close()
    temp.cleanup()
  }
}

/** `{ session, message, user? }` or query `user?`: the fields a request sends, optional ones marked. */
function requestOf(operation: Operation): string {
  const body = operation.requestBody?.content['application/json'].schema
  const fields = (names: string[], required: string[]) => names.map((name) => (required.includes(name) ? name : `${name}?`))
  if (body) return `\`{ ${fields(Object.keys(body.properties ?? {}), body.required ?? []).join(', ')} }\``
  const query = operation.parameters.filter((parameter) => parameter.in === 'query')
  if (query.length === 0) return ''
  return `query \`${fields(query.map((parameter) => parameter.name), query.filter((parameter) => parameter.required).map((parameter) => parameter.name)).join(', ')}\``
}

/** The markdown of docs/http-api.md from an OpenAPI document's paths, in the order the app adds its routes. */
export function httpApiDocs(document: { paths: Record<string, Record<string, Operation>> }): string {
  const rows = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => {
      const open = operation.security?.length === 0 ? ' (no credentials)' : ''
      const cell = (text: string) => text.replaceAll('|', '\\|')
      return `| \`${method.toUpperCase()} ${path}\` | ${cell(operation.summary)}${open} | ${cell(requestOf(operation))} | ${cell(operation.responses['200'].description)} |`
    }),
  )
  return [
    '# The HTTP API of `engram serve`',
    '',
    '<!-- Generated from the route table by `npm run docs` (scripts/http-api-docs.ts); do not edit. -->',
    '',
    'Every route of the JSON API (decision 0038), as the app mounts it. `GET /v1/openapi.json` serves the',
    'same routes as an OpenAPI 3.1 document with every schema. Every answer is `{ ok: true, … }` or',
    '`{ ok: false, error: { code, message, fix } }`; a request acts for its bearer token\'s user.',
    '',
    '| Route | What | Request | A success carries |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n')
}

if (import.meta.main) {
  const root = resolve(import.meta.dirname, '..')
  writeFileSync(join(root, 'docs', 'http-api.md'), httpApiDocs(await servedOpenApi()))
  console.log('wrote docs/http-api.md')
}
