/**
 * The routes of `engram serve`'s API as data, and the OpenAPI 3.1 document generated from them
 * (decision 0038). A route is registered through `apiRoutes(app).add(route, handler)`, which both
 * mounts the handler and records the route, so `/v1/openapi.json` lists exactly what the app
 * serves; request schemas are the zod schemas the handlers parse with (the tools' own where one
 * exists), turned into JSON Schema 2020-12 by `z.toJSONSchema` — no second description to drift.
 */
import type { Handler, Hono } from 'hono'
import { z } from 'zod'
import { inputJsonSchemaOf } from '../../tools/adapters.ts'
import type { ServeEnv } from './support.ts'

/** One route of the API. */
export interface ApiRoute {
  method: 'get' | 'post'
  /** Hono's form: `/v1/turns/:session/:turn`. */
  path: string
  summary: string
  /** What a success carries besides `ok: true`. */
  returns: string
  /** The JSON body (POST), as the handler parses it. */
  body?: z.ZodType
  /** The query parameters (GET), an object of optional or required strings. */
  query?: z.ZodObject
  /** The path parameters. */
  params?: z.ZodObject
  /** Served without credentials. */
  open?: boolean
  /** The answer is a document of its own, not wrapped in `{ ok: true, … }`. */
  unwrapped?: boolean
}

/** The routes of one app, and how to add one. */
export interface ApiRoutes {
  readonly routes: readonly ApiRoute[]
  add(route: ApiRoute, handler: Handler<ServeEnv>): void
}

/** A registry over `app`: each route added is mounted on the app and listed in the document. */
export function apiRoutes(app: Hono<ServeEnv>): ApiRoutes {
  const routes: ApiRoute[] = []
  return {
    routes,
    add(route, handler) {
      routes.push(route)
      app.on(route.method.toUpperCase(), route.path, handler)
    },
  }
}

/** The one error shape, as every route answers a failure. */
const errorSchema = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.string().describe('an engram ErrorCode (invalid_argument, unauthorized, access_denied, not_found, limit_exceeded, …) or internal'),
    message: z.string().describe('what happened'),
    fix: z.string().describe('what to do about it'),
  }),
})

/** `/v1/turns/:session/:turn` → `/v1/turns/{session}/{turn}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

function parametersOf(schema: z.ZodObject | undefined, where: 'query' | 'path'): Array<Record<string, unknown>> {
  if (!schema) return []
  const json = inputJsonSchemaOf(schema) as { properties?: Record<string, Record<string, unknown>>; required?: string[] }
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property
    return { name, in: where, required: where === 'path' || (json.required ?? []).includes(name), ...(description !== undefined ? { description } : {}), schema: rest }
  })
}

const ERROR_STATUSES: Record<string, string> = {
  '400': 'A bad request (invalid_argument): the message lists what is wrong, the fix what to send',
  '401': 'No valid credential (unauthorized)',
  '403': 'Not this credential\'s to do (access_denied): another user, or a cross-site write',
  '404': 'Not found, or not this caller\'s to know of (not_found)',
  '413': 'The body is over the server\'s bound (limit_exceeded)',
  '415': 'The body is not JSON',
  '500': 'The server failed (internal); please report',
}

function operationOf(route: ApiRoute): Record<string, unknown> {
  const statuses = ['400', ...(route.open ? [] : ['401', '403']), '404', ...(route.method === 'post' ? ['413', '415'] : []), '500']
  const responses: Record<string, unknown> = {
    '200': { description: route.returns, content: { 'application/json': { schema: route.unwrapped ? { type: 'object' } : { type: 'object', properties: { ok: { const: true } }, required: ['ok'] } } } },
  }
  for (const status of statuses) responses[status] = { $ref: `#/components/responses/Error${status}` }
  return {
    summary: route.summary,
    operationId: `${route.method}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
    ...(route.open ? { security: [] } : {}),
    parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')],
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: inputJsonSchemaOf(route.body) } } } } : {}),
    responses,
  }
}

/** The OpenAPI 3.1 document of `routes`. */
export function openApiDocument(routes: readonly ApiRoute[], info: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of routes) {
    const path = openApiPath(route.path)
    paths[path] = { ...paths[path], [route.method]: operationOf(route) }
  }
  const errorResponses: Record<string, unknown> = {}
  for (const [status, description] of Object.entries(ERROR_STATUSES)) {
    errorResponses[`Error${status}`] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'engram serve',
      version: info.version,
      description: "The HTTP API of an engram agent's long-term memory (decision 0038). A request acts for its token's user; naming another user is refused unless the token is an administrator's. Every failure is the Error schema.",
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: { Error: inputJsonSchemaOf(errorSchema) },
      responses: errorResponses,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'a token of serve.tokens (ENGRAM_SERVE_TOKENS)' },
      },
    },
  }
}
