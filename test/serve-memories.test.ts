/**
 * `/v1/memories…` (decision 0065) through the real app (`createServeApp(…).request`): ada's and
 * bob's tokens add, search, list, get, update, delete and read the history of their memories;
 * ada's token never reaches bob's, by naming him or by his ids; bad input is a 400 with its fix;
 * the routes are in the OpenAPI document.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ADA, ADMIN, type App, assertError, assertOk, BOB, call, openServeHome, type ServeHome } from './support/serve-app.ts'

describe('engram serve: /v1/memories', () => {
  let home: ServeHome
  let app: App
  let adaId: string
  let bobId: string
  before(async () => {
    home = await openServeHome()
    app = home.app
  })
  after(() => home.close())

  test('add answers per memory what it did, with ids, as the token’s user', async () => {
    const ada = assertOk(await call(app, 'POST', '/v1/memories', { token: ADA, body: { text: ['Ada waters the orchids on Fridays', 'Ada flies to Lisbon in May'] } }))
    assert.deepEqual(
      ada.results.map((r: { event: string; owner: string }) => [r.event, r.owner]),
      [
        ['added', 'user:ada'],
        ['added', 'user:ada'],
      ],
    )
    adaId = ada.results[0].id
    const bob = assertOk(await call(app, 'POST', '/v1/memories', { token: BOB, body: { text: 'Bob restores the orchids greenhouse', kind: 'lesson' } }))
    bobId = bob.results[0].id
    assertError(await call(app, 'POST', '/v1/memories', { token: ADA, body: { text: 'x', user: 'bob' } }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/memories', { token: ADA, body: { text: '' } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/memories', { token: ADA, body: { text: 'x', kind: 'opinion' } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/memories', { body: { text: 'x' } }), 401, 'unauthorized')
  })

  test('search and the list show a token its user’s memories, never another user’s', async () => {
    const found = assertOk(await call(app, 'POST', '/v1/memories/search', { token: ADA, body: { query: 'orchids' } }))
    const ids = found.memories.map((m: { id: string }) => m.id)
    assert.ok(ids.includes(adaId))
    assert.ok(!ids.includes(bobId))
    const list = assertOk(await call(app, 'GET', '/v1/memories?limit=1', { token: ADA }))
    assert.equal(list.total, 2)
    assert.equal(list.memories.length, 1)
    assert.equal(list.nextOffset, 1)
    const rest = assertOk(await call(app, 'GET', '/v1/memories?limit=1&offset=1', { token: ADA }))
    assert.equal(rest.nextOffset, undefined)
    assert.ok([...list.memories, ...rest.memories].every((m: { owner: string }) => m.owner === 'user:ada'))
    assertError(await call(app, 'GET', '/v1/memories?user=bob', { token: ADA }), 403, 'access_denied')
    assertError(await call(app, 'GET', '/v1/memories?limit=0', { token: ADA }), 400, 'invalid_argument')
    // An administrator names the user.
    assert.deepEqual(assertOk(await call(app, 'GET', '/v1/memories?user=bob', { token: ADMIN })).memories.map((m: { id: string }) => m.id), [bobId])
  })

  test('get, update, delete and history of another user’s id are not found; of one’s own they work', async () => {
    assert.equal(assertOk(await call(app, 'GET', `/v1/memories/${adaId}`, { token: ADA })).memory.text, 'Ada waters the orchids on Fridays')
    assertError(await call(app, 'GET', `/v1/memories/${bobId}`, { token: ADA }), 404, 'not_found')
    assertError(await call(app, 'POST', `/v1/memories/${bobId}/update`, { token: ADA, body: { text: 'Bob sold the greenhouse' } }), 404, 'not_found')
    assertError(await call(app, 'POST', `/v1/memories/${bobId}/delete`, { token: ADA, body: { purge: true } }), 404, 'not_found')
    assertError(await call(app, 'GET', `/v1/memories/${bobId}/history`, { token: ADA }), 404, 'not_found')
    assert.equal(assertOk(await call(app, 'GET', `/v1/memories/${bobId}`, { token: BOB })).memory.text, 'Bob restores the orchids greenhouse')

    const updated = assertOk(await call(app, 'POST', `/v1/memories/${adaId}/update`, { token: ADA, body: { text: 'Ada waters the orchids on Sundays' } })).result
    assert.equal(updated.event, 'updated')
    assertError(await call(app, 'GET', `/v1/memories/${adaId}`, { token: ADA }), 404, 'not_found')
    const deleted = assertOk(await call(app, 'POST', `/v1/memories/${updated.id}/delete`, { token: ADA, body: {} })).deleted
    assert.equal(deleted.action, 'forgotten')
    assertOk(await call(app, 'POST', '/v1/restore', { token: ADA, body: { target: deleted.path } }))
    assert.equal(assertOk(await call(app, 'GET', `/v1/memories/${updated.id}`, { token: ADA })).memory.text, 'Ada waters the orchids on Sundays')
    assertError(await call(app, 'GET', `/v1/memories/${updated.id}/history`, { token: ADA }), 400, 'invalid_argument')
  })

  test('the routes are in the OpenAPI document', async () => {
    const document = (await call(app, 'GET', '/v1/openapi.json')).body
    for (const [path, method] of [
      ['/v1/memories', 'post'],
      ['/v1/memories', 'get'],
      ['/v1/memories/search', 'post'],
      ['/v1/memories/{id}', 'get'],
      ['/v1/memories/{id}/update', 'post'],
      ['/v1/memories/{id}/delete', 'post'],
      ['/v1/memories/{id}/history', 'get'],
    ] as const) {
      assert.ok(document.paths[path]?.[method], `${method} ${path}`)
    }
  })
  test('add takes a conversation: the facts the token’s user states are stored for that user, with how they were found', async () => {
    const added = assertOk(await call(app, 'POST', '/v1/memories', { token: BOB, body: { messages: [{ role: 'user', content: 'I live in Tromsø.' }, { role: 'assistant', content: 'I live in the cloud.' }] } }))
    assert.equal(added.method, 'rules')
    assert.deepEqual(added.results.map((r: { event: string; owner: string; text: string }) => [r.event, r.owner, r.text]), [['added', 'user:bob', 'Location: Tromsø']])
    assert.ok(assertOk(await call(app, 'POST', '/v1/memories/search', { token: ADA, body: { query: 'Tromsø' } })).memories.every((m: { owner: string }) => m.owner === 'user:ada'))
    assertError(await call(app, 'POST', '/v1/memories', { token: BOB, body: { text: 'x', messages: [{ role: 'user', content: 'I live in Oslo.' }] } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/memories', { token: BOB, body: {} }), 400, 'invalid_argument')
  })
})
