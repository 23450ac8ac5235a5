/**
 * The routes of `engram serve`'s API as data, and the OpenAPI 3.1 document generated from them
 * (decision 0038). A route is registered through `apiRoutes(app).add(route, handler)`, which both
 * mounts the handler and records the route, so `/v1/openapi.json` lists exactly what the app
 * serves. A route declares the zod schemas of its body, query and path parameters (the tools' own
 * where one exists); the route layer parses the request with them and hands the handler the typed
 * result (decision 0064), and `z.toJSONSchema` turns the same schemas into JSON Schema 2020-12 —
 * no second description, and no second parse, to drift.
 */
import type { Context, Hono } from 'hono'
import { z } from 'zod'
import { inputJsonSchemaOf } from '../../tools/adapters.ts'
import { jsonBody, parseWith, type ServeEnv } from './support.ts'

/** A part of a request (its JSON body, query or path parameters): the schema it is parsed with, and how a refusal words it. */
export interface RequestPart<S extends z.ZodType> {
  /** Parsed before the handler runs; its input side is what the OpenAPI document shows. */
  schema: S
  /** What the refusal calls the part: "The turn is not valid: …". */
  what: string
  /** What to send instead. */
  fix: string
}

/** One route of the API. */
export interface ApiRoute<B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType> {
  method: 'get' | 'post'
  /** Hono's form: `/v1/turns/:session/:turn`. */
  path: string
  summary: string
  /** What a success carries besides `ok: true`. */
  returns: string
  /** The JSON body (POST). */
  body?: RequestPart<B>
  /** The query parameters (GET): an object of optional or required strings on its input side. */
  query?: RequestPart<Q>
  /** The path parameters. */
  params?: RequestPart<P>
  /** Who may call, checked before anything of the request is parsed: throws the refusal. */
  allow?: (c: Context<ServeEnv>) => void
  /** Served without credentials. */
  open?: boolean
  /** The answer is a document of its own, not wrapped in `{ ok: true, … }`. */
  unwrapped?: boolean
}

/** The parsed parts a handler is given (a part the route does not declare is `undefined`). */
export interface RouteInput<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> {
  body: z.output<B>
  query: z.output<Q>
  params: z.output<P>
}

export type RouteHandler<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> = (c: Context<ServeEnv>, input: RouteInput<B, Q, P>) => Response | Promise<Response>

/** The routes of one app, and how to add one. */
export interface ApiRoutes {
  readonly routes: readonly ApiRoute[]
  add<B extends z.ZodType = z.ZodUndefined, Q extends z.ZodType = z.ZodUndefined, P extends z.ZodType = z.ZodUndefined>(route: ApiRoute<B, Q, P>, handler: RouteHandler<B, Q, P>): void
}

/**
 * A registry over `app`: each route added is mounted on the app and listed in the document. A
 * request is checked in one order — who may call, the path parameters, the query, the body — and
 * the first part that does not parse is refused as `invalid_argument` before the handler runs.
 */
export function apiRoutes(app: Hono<ServeEnv>): ApiRoutes {
  const routes: ApiRoute[] = []
  function add<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(route: ApiRoute<B, Q, P>, handler: RouteHandler<B, Q, P>): void {
    routes.push(route as ApiRoute)
    app.on(route.method.toUpperCase(), route.path, async (c) => {
      route.allow?.(c)
      const { params, query, body } = route
      const input = {
        params: params ? parseWith(params.schema, c.req.param(), params.what, params.fix) : undefined,
        query: query ? parseWith(query.schema, c.req.query(), query.what, query.fix) : undefined,
        body: body ? parseWith(body.schema, await jsonBody(c), body.what, body.fix) : undefined,
      }
      return handler(c, input as RouteInput<B, Q, P>)
    })
  }
  return { routes, add }
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

function parametersOf(schema: z.ZodType | undefined, where: 'query' | 'path'): Array<Record<string, unknown>> {
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
    parameters: [...parametersOf(route.params?.schema, 'path'), ...parametersOf(route.query?.schema, 'query')],
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: inputJsonSchemaOf(route.body.schema) } } } } : {}),
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
