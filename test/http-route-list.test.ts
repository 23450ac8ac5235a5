/**
 * The routes of `engram serve` are one table (decision 0064): the app mounts them, the OpenAPI
 * document and docs/http-api.md are made from them, and the route layer parses each request with
 * the schemas a route declares, once, handing the handler the typed result.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Hono } from 'hono'
import { z } from 'zod'
import { httpApiDocs, servedOpenApi } from '../scripts/http-api-docs.ts'
import { EngramError, ErrorCode } from '../src/core/errors.ts'
import { apiRoutes, openApiPath } from '../src/interfaces/http/openapi.ts'
import { failure, type ServeEnv, userError } from '../src/interfaces/http/support.ts'
import { ADA, ADMIN, assertError, assertOk, call, openServeHome, type ServeHome } from './support/serve-app.ts'

const root = resolve(import.meta.dirname, '..')

describe('engram serve: one route table', () => {
  let serve: ServeHome
  before(async () => {
    serve = await openServeHome()
  })
  after(() => serve.close())

  test('docs/http-api.md is the list generated from the route table (run `npm run docs` after changing a route)', async () => {
    assert.equal(readFileSync(join(root, 'docs', 'http-api.md'), 'utf8'), httpApiDocs(await servedOpenApi()))
  })

  test('every route the app serves is in the list, and every route of the list is served', () => {
    const listed = [...readFileSync(join(root, 'docs', 'http-api.md'), 'utf8').matchAll(/^\| `([A-Z]+) (\/\S+)` \|/gm)].map((match) => `${(match[1] as string).toLowerCase()} ${match[2]}`)
    // Routes as Hono registered them (middleware is method ALL); the dashboard and /mcp are not the JSON API.
    const served = serve.app.routes.filter((route) => route.method !== 'ALL' && route.path.startsWith('/v1/')).map((route) => `${route.method.toLowerCase()} ${openApiPath(route.path)}`)
    assert.deepEqual([...listed].sort(), [...new Set(served)].sort())
    assert.ok(listed.includes('post /v1/users/{user}/erase'), 'the erasure is listed')
  })

  test('who may call is checked before the request is parsed: a user erasing with a bad body is refused as not theirs', async () => {
    assertError(await call(serve.app, 'POST', '/v1/users/bob/erase', { token: ADA, body: { purge: 'yes' } }), 403, 'access_denied')
    const refused = await call(serve.app, 'POST', '/v1/users/bob/erase', { token: ADMIN, body: { purge: 'yes' } })
    assertError(refused, 400, 'invalid_argument')
    assert.match(refused.body.error.message, /^The erasure is not valid:\n- purge:/)
  })

  test('the search takes its query string as the body it stands for: q for query, kinds split, an empty user as none', async () => {
    const byQ = assertOk(await call(serve.app, 'GET', '/v1/search?q=tea&kinds=lesson,%20rule&user=', { token: ADA }))
    assert.deepEqual(byQ.hits, [])
    assertOk(await call(serve.app, 'POST', '/v1/search', { token: ADA, body: { query: 'tea', user: '' } }))
    const refused = await call(serve.app, 'GET', '/v1/search?kinds=lesson', { token: ADA })
    assertError(refused, 400, 'invalid_argument')
    assert.match(refused.body.error.message, /^The search is not valid:\n- query:/)
  })
})

describe('the route layer', () => {
  /** A bare app with one route whose handler records what it was given. */
  function appWith(seen: unknown[]) {
    const app = new Hono<ServeEnv>()
    app.onError((error, c) => (EngramError.is(error) ? failure(c, error.code, error.message, error.fix ?? '') : failure(c, 'internal', String(error), '')))
    app.use('*', async (c, next) => {
      c.set('principal', { agent: 'default', user: c.req.header('x-user'), admin: false })
      return next()
    })
    apiRoutes(app).add(
      {
        method: 'post',
        path: '/v1/items/:n',
        summary: 'an item',
        returns: 'nothing',
        allow: (c) => {
          if (c.get('principal').user === 'mallory') throw userError(ErrorCode.accessDenied, 'not yours', 'ask the owner')
        },
        params: { schema: z.object({ n: z.coerce.number().int() }), what: 'The item', fix: 'a number in the path' },
        query: { schema: z.object({ tag: z.string().optional() }), what: 'The query', fix: 'tag=…' },
        body: { schema: z.object({ text: z.string().trim().min(1) }), what: 'The body', fix: 'send {"text": "…"}' },
      },
      (c, { params, query, body }) => {
        // Typed as parsed: n is a number, text is trimmed.
        seen.push({ n: params.n + 1, tag: query.tag, text: body.text })
        return c.json({ ok: true })
      },
    )
    return app
  }
  const post = (app: Hono<ServeEnv>, path: string, body: unknown, user?: string) =>
    app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...(user !== undefined ? { 'x-user': user } : {}) }, body: JSON.stringify(body) })

  test('hands the handler the parsed parts, once, and never calls it with a part that does not parse', async () => {
    const seen: unknown[] = []
    const app = appWith(seen)
    assert.equal((await post(app, '/v1/items/41?tag=x', { text: '  hello ' })).status, 200)
    assert.deepEqual(seen, [{ n: 42, tag: 'x', text: 'hello' }])

    const badParams = await post(app, '/v1/items/one', { text: 'hello' })
    assert.equal(badParams.status, 400)
    assert.deepEqual(((await badParams.json()) as { error: { fix: string } }).error.fix, 'a number in the path')
    const badBody = (await (await post(app, '/v1/items/1', { text: ' ' })).json()) as { error: { code: string; message: string; fix: string } }
    assert.equal(badBody.error.code, ErrorCode.invalidArgument)
    assert.match(badBody.error.message, /^The body is not valid:\n- text:/)
    assert.equal(badBody.error.fix, 'send {"text": "…"}')
    assert.equal((await post(app, '/v1/items/1', { text: 'hello' }, 'mallory')).status, 403)
    assert.equal((await post(app, '/v1/items/one', { text: 'hello' }, 'mallory')).status, 403, 'allow runs before the parts are parsed')
    assert.equal(seen.length, 1)
  })
})
