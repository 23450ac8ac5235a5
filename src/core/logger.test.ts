import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createLineLogger, type Logger, type LogFields, withLevel } from './logger.ts'

const at = new Date('2026-03-02T09:00:00Z')

test('JSON lines have pino\'s shape, and only levels at log.level or above are written', () => {
  const lines: string[] = []
  const logger = createLineLogger({ level: 'warn', write: (line) => lines.push(line), now: () => at })
  logger.debug({}, 'not shown')
  logger.info({}, 'not shown either')
  logger.warn({ status: 401, task: 'episode' }, 'LLM authentication failed')
  logger.error({ error: new Error('disk full') }, 'could not write')
  assert.equal(lines.length, 2)
  assert.ok(lines.every((line) => line.endsWith('\n') && !line.slice(0, -1).includes('\n')), 'one line each')
  assert.deepEqual(JSON.parse(lines[0] as string), { level: 40, time: at.getTime(), name: 'engram', status: 401, task: 'episode', msg: 'LLM authentication failed' })
  assert.deepEqual(JSON.parse(lines[1] as string).error, { name: 'Error', message: 'disk full' })
})

test('text lines for a terminal; silent writes nothing; debug writes everything', () => {
  const text: string[] = []
  createLineLogger({ level: 'info', format: 'text', write: (line) => text.push(line) }).info({ status: 401, nested: { a: 1 } }, 'hello')
  assert.deepEqual(text, ['engram info: hello (status=401)\n'])

  const none: string[] = []
  const silent = createLineLogger({ level: 'silent', write: (line) => none.push(line) })
  silent.error({}, 'x')
  silent.warn({}, 'x')
  assert.deepEqual(none, [])

  const all: string[] = []
  const debug = createLineLogger({ level: 'debug', write: (line) => all.push(line) })
  for (const method of ['error', 'warn', 'info', 'debug'] as const) debug[method]({}, method)
  assert.equal(all.length, 4)
})

test("a host's logger gets (fields, message) at log.level; a throwing sink or logger never throws into engram", () => {
  const calls: Array<[string, LogFields, string]> = []
  const host: Logger = {
    error: (fields, message) => calls.push(['error', fields, message]),
    warn: (fields, message) => calls.push(['warn', fields, message]),
    info: (fields, message) => calls.push(['info', fields, message]),
    debug: () => {
      throw new Error('broken host logger')
    },
  }
  const logger = withLevel(host, 'debug')
  logger.warn({ kind: 'auth' }, 'refused')
  logger.debug({}, 'dropped by the host, quietly')
  assert.deepEqual(calls, [['warn', { kind: 'auth' }, 'refused']])
  withLevel(host, 'error').warn({}, 'below error: not passed on')
  assert.equal(calls.length, 1)

  const broken = createLineLogger({ level: 'debug', write: () => {
    throw new Error('EPIPE')
  } })
  broken.warn({}, 'stderr is closed')
})
