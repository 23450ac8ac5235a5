/**
 * The order admission control takes waiting requests in (decision 0089, amended), on a real
 * `node:http` server on loopback: one place in work, a listener that holds each request until the
 * test answers it, so the order in which requests go to work is seen exactly.
 */
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { admitRequests, requestsInWorkOf } from './admission.ts'

interface Held {
  path: string
  tag: string
  response: ServerResponse
}

/** A server with one place in work and `queued` waiting; `started` lists the requests as they go to work. */
async function holdingServer(t: TestContext, queued: number) {
  const started: Held[] = []
  let arrived = 0
  const server = createServer(
    admitRequests(
      (request: IncomingMessage, response: ServerResponse) => {
        request.resume()
        request.once('end', () => started.push({ path: request.url ?? '', tag: String(request.headers['x-tag']), response }))
      },
      { requestsInWork: 1, requestsQueued: queued },
      () => {},
    ),
  )
  server.prependListener('request', () => arrived++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const send = (path: string, tag: string) =>
    new Promise<number>((resolve, reject) => {
      const body = '{}'
      const request = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-tag': tag } }, (response) => {
        response.resume()
        response.once('end', () => resolve(response.statusCode ?? 0))
      })
      request.once('error', reject)
      request.end(body)
    })
  const until = async (what: () => boolean) => {
    for (const deadline = Date.now() + 10_000; !what(); ) {
      if (Date.now() > deadline) throw new Error('timed out')
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
  /** Sends one request and waits until the server has it (in work or waiting), so the next one arrives after it; then its status, when answered. */
  const arrive = async (path: string, tag: string): Promise<{ status: Promise<number> }> => {
    const before = arrived
    const status = send(path, tag)
    await until(() => arrived > before)
    return { status }
  }
  /** Answers the request in work and waits for the next one to go to work; returns the tags in the order they went. */
  const answerAll = async (count: number) => {
    for (let i = 0; i < count; i++) {
      await until(() => started.length > i)
      started[i]?.response.end('{}')
    }
    return started.map((held) => held.tag)
  }
  const close = () => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  }
  t.after(close)
  return { started, arrive, answerAll }
}

test('a waiting beginning of a turn goes to work before the ends and memorizes that came before it', async (t) => {
  const server = await holdingServer(t, 8)
  const arrivals = [
    await server.arrive('/v1/turns/end', 'in work'),
    await server.arrive('/v1/turns/end', 'end 1'),
    await server.arrive('/v1/memorize', 'memorize'),
    await server.arrive('/v1/turns/begin', 'begin 1'),
    await server.arrive('/v1/search', 'search'),
    await server.arrive('/v1/turns/begin', 'begin 2'),
  ]
  assert.deepEqual(await server.answerAll(6), ['in work', 'begin 1', 'begin 2', 'end 1', 'memorize', 'search'])
  assert.deepEqual(await Promise.all(arrivals.map(({ status }) => status)), [200, 200, 200, 200, 200, 200])
})

test('a waiting request is passed over by at most 8 beginnings', async (t) => {
  const server = await holdingServer(t, 16)
  const arrivals = [await server.arrive('/v1/turns/end', 'in work'), await server.arrive('/v1/turns/end', 'end')]
  for (let i = 1; i <= 10; i++) arrivals.push(await server.arrive('/v1/turns/begin', `begin ${i}`))
  const order = await server.answerAll(12)
  assert.deepEqual(order, ['in work', ...Array.from({ length: 8 }, (_, i) => `begin ${i + 1}`), 'end', 'begin 9', 'begin 10'])
  await Promise.all(arrivals.map(({ status }) => status))
})

test('beginnings wait in the one queue bound: one more than it holds is refused with 503', async (t) => {
  const server = await holdingServer(t, 1)
  const inWork = await server.arrive('/v1/turns/end', 'in work')
  const waiting = await server.arrive('/v1/turns/begin', 'begin 1')
  const refused = await server.arrive('/v1/turns/begin', 'begin 2')
  assert.equal(await refused.status, 503)
  assert.deepEqual(await server.answerAll(2), ['in work', 'begin 1'])
  assert.deepEqual(await Promise.all([inWork.status, waiting.status]), [200, 200])
})

test('serve.requestsInWork 0 takes 2 on the embedded home and 4 on PostgreSQL; a number set is kept', () => {
  assert.equal(requestsInWorkOf(0, false), 2)
  assert.equal(requestsInWorkOf(0, true), 4)
  assert.equal(requestsInWorkOf(7, false), 7)
  assert.equal(requestsInWorkOf(1, true), 1)
})
