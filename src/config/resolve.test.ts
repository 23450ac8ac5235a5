import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { EngramError } from '../core/errors.ts'
import { makeTempHome } from '../testing/temp-home.ts'
import { displayValue, resolveConfig } from './resolve.ts'

test('defaults < config.json < env < flags, each value with its source', (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  mkdirSync(tmp.home, { recursive: true })
  writeFileSync(join(tmp.home, 'config.json'), JSON.stringify({ memory: { mode: 'copilot' }, context: { budget: 8000, freshTail: 12 } }))
  const config = resolveConfig({
    env: { ...tmp.env, ENGRAM_HOME: tmp.home, ENGRAM_CONTEXT_BUDGET: '9000' },
    flags: { 'context.freshTail': 5 },
  })
  assert.equal(config.values.home, tmp.home)
  assert.equal(config.values.memory.mode, 'copilot')
  assert.equal(config.sources['memory.mode'], 'file')
  assert.equal(config.values.context.budget, 9000)
  assert.equal(config.sources['context.budget'], 'env')
  assert.equal(config.values.context.freshTail, 5)
  assert.equal(config.sources['context.freshTail'], 'flag')
  assert.equal(config.values.context.threshold, 0.75)
  assert.equal(config.sources['context.threshold'], 'default')
  assert.ok(Object.isFrozen(config.values) && Object.isFrozen(config.values.context))
})

test('a config with three mistakes names all three, each with its fix', (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  mkdirSync(tmp.home, { recursive: true })
  writeFileSync(join(tmp.home, 'config.json'), JSON.stringify({ memory: { mode: 'sometimes' }, context: { budgett: 10 } }))
  let caught: unknown
  try {
    resolveConfig({ env: { ...tmp.env, ENGRAM_HOME: tmp.home, ENGRAM_CONTEXT_THRESHOLD: 'lots' } })
  } catch (error) {
    caught = error
  }
  assert.ok(EngramError.is(caught), 'throws an EngramError')
  assert.equal(caught.code, 'config_invalid')
  const problems = caught.details.problems as Array<{ key: string; fix: string }>
  assert.deepEqual(problems.map((p) => p.key).sort(), ['context.budgett', 'context.threshold', 'memory.mode'])
  assert.match(caught.message, /3 problems/)
  assert.match(caught.message, /ENGRAM_MEMORY_MODE/)
  assert.match(caught.message, /autopilot \| copilot \| off/)
  for (const problem of problems) assert.ok(problem.fix.length > 0)
})

test('broken config.json JSON is reported with a fix', (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  mkdirSync(tmp.home, { recursive: true })
  writeFileSync(join(tmp.home, 'config.json'), '{"memory": {"mode": "off",}')
  assert.throws(() => resolveConfig({ env: { ...tmp.env, ENGRAM_HOME: tmp.home } }), /not valid JSON[\s\S]*fix/)
})

test('provider cross-checks and masked secrets', (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  assert.throws(
    () => resolveConfig({ env: { ...tmp.env, ENGRAM_HOME: tmp.home, ENGRAM_LLM_PROVIDER: 'openai-compatible' } }),
    /ENGRAM_LLM_BASE_URL[\s\S]*ENGRAM_LLM_MODEL/,
  )
  const config = resolveConfig({
    env: { ...tmp.env, ENGRAM_HOME: tmp.home, ENGRAM_LLM_PROVIDER: 'openai', ENGRAM_LLM_MODEL: 'gpt-x', ENGRAM_LLM_API_KEY: 'sk-secret' },
  })
  assert.equal(displayValue(config, 'llm.apiKey'), '********')
  assert.equal(displayValue(config, 'llm.model'), 'gpt-x')
  assert.equal(config.values.home, tmp.home)
})

test('home defaults to ~/.engram of the given HOME', (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const config = resolveConfig({ env: tmp.env })
  assert.equal(config.values.home, join(tmp.env.HOME as string, '.engram'))
})

test("serve's bounds on slow clients: sensible defaults, set by env", (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const defaults = resolveConfig({ env: tmp.env, ignoreFile: true }).values.serve
  assert.deepEqual(
    { headers: defaults.headersTimeoutMs, request: defaults.requestTimeoutMs, keepAlive: defaults.keepAliveTimeoutMs, perClient: defaults.maxConnectionsPerClient, all: defaults.maxConnections },
    { headers: 10_000, request: 30_000, keepAlive: 5_000, perClient: 64, all: 1024 },
  )
  const set = resolveConfig({ env: { ...tmp.env, ENGRAM_SERVE_HEADERS_TIMEOUT_MS: '500', ENGRAM_SERVE_MAX_CONNECTIONS_PER_CLIENT: '0' }, ignoreFile: true })
  assert.equal(set.values.serve.headersTimeoutMs, 500)
  assert.equal(set.sources['serve.headersTimeoutMs'], 'env')
  assert.equal(set.values.serve.maxConnectionsPerClient, 0)
  assert.throws(() => resolveConfig({ env: { ...tmp.env, ENGRAM_SERVE_REQUEST_TIMEOUT_MS: '10' }, ignoreFile: true }), /ENGRAM_SERVE_REQUEST_TIMEOUT_MS="10": must be at least 100/)
})
