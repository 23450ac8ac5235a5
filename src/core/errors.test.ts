import assert from 'node:assert/strict'
import { test } from 'node:test'
import { describeError, EngramError, ErrorCode, messageOf, withFix } from './errors.ts'

const refused = new EngramError({ code: ErrorCode.accessDenied, category: 'user', message: 'Not yours.', fix: 'ask as that user' })

test('an EngramError keeps its message and its fix apart; what a person reads joins them', () => {
  assert.equal(refused.message, 'Not yours.')
  assert.equal(refused.fix, 'ask as that user')
  assert.deepEqual(refused.toJSON(), { name: 'EngramError', code: 'access_denied', category: 'user', message: 'Not yours.', fix: 'ask as that user', details: {} })
  assert.equal(describeError(refused), 'Not yours.\nFix: ask as that user')
  assert.equal(messageOf(refused), 'Not yours.\nFix: ask as that user')
  assert.equal(withFix('Gone.', undefined), 'Gone.')
})

test('any other thrown value reads as before: describeError names it, messageOf is its message', () => {
  assert.equal(describeError(new TypeError('bad')), 'TypeError: bad')
  assert.equal(messageOf(new TypeError('bad')), 'bad')
  assert.equal(messageOf('plain'), 'plain')
  const noFix = new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: 'Locked.' })
  assert.equal(describeError(noFix), 'Locked.')
})
