import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { test } from 'node:test'
import { serverTimeouts } from './connection-limits.ts'

const limits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnectionsPerClient: 64, maxConnections: 1024 }

test("Node's server options: the timeouts as set, checked every quarter of the headers timeout (at most a second)", () => {
  assert.deepEqual(serverTimeouts(limits), { headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 })
  assert.equal(serverTimeouts({ ...limits, headersTimeoutMs: 1_000, requestTimeoutMs: 1_500 }).connectionsCheckingInterval, 250)
})

test('a request timeout shorter than the headers timeout bounds the headers too, and Node accepts the server', () => {
  const options = serverTimeouts({ ...limits, requestTimeoutMs: 2_000 })
  assert.equal(options.headersTimeout, 2_000)
  assert.equal(options.connectionsCheckingInterval, 500)
  const server = createServer(options)
  assert.equal(server.headersTimeout, 2_000)
  assert.equal(server.requestTimeout, 2_000)
  server.close()
})
