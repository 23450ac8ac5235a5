import assert from 'node:assert/strict'
import { test } from 'node:test'
import { EngramError } from '../core/errors.ts'
import { partsOf } from '../core/message-parts.ts'
import { replyToMessages, saidText } from './reply-messages.ts'

const at = '2026-03-02T09:00:00.000Z'

test('text stays text: no parts are stored for it', () => {
  assert.deepEqual(replyToMessages('Hello.', at), [{ role: 'assistant', content: 'Hello.', at }])
  assert.deepEqual(replyToMessages([{ role: 'assistant', content: [{ type: 'text', text: 'Hi' }] }], at), [{ role: 'assistant', content: 'Hi', at }])
})

test('tool calls and results are kept as parts, with a text rendering as content', () => {
  const [call, result] = replyToMessages(
    [
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'I should write this down.' },
          { type: 'text', text: 'Noting it.' },
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'memorize', input: { entries: [{ text: 'cats', kind: 'lesson' }] }, providerOptions: undefined },
        ] as const,
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'memorize', output: { type: 'text', value: 'Saved 1.' } }] as const },
    ],
    at,
  )
  assert.equal(call?.content, 'Noting it.\n[tool call memorize call_1] {"entries":[{"text":"cats","kind":"lesson"}]}')
  assert.deepEqual(partsOf(call?.meta)?.map((part) => part.type), ['reasoning', 'text', 'tool-call'])
  assert.equal('providerOptions' in (partsOf(call?.meta)?.[2] ?? {}), false, 'undefined fields are dropped, as JSON drops them')
  assert.equal(result?.content, '[tool result memorize call_1] Saved 1.')
  assert.equal(saidText(call!), 'Noting it.')
  assert.equal(saidText(result!), '')
})

test('bytes become base64, errors and denials read as such', () => {
  const [message, file] = replyToMessages(
    [
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 'shell', output: { type: 'error-text', value: 'exit 1' } },
          { type: 'tool-result', toolCallId: 'b', toolName: 'rm', output: { type: 'execution-denied', reason: 'not allowed' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'file', mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) }] as const },
    ],
    at,
  )
  assert.equal(message?.content, '[tool result shell a] Error: exit 1\n[tool result rm b] (not run: denied — not allowed)')
  assert.equal(file?.content, '[file image/png]')
  assert.deepEqual(partsOf(file?.meta)?.[0], { type: 'file', mediaType: 'image/png', data: 'AQID' }, 'bytes as base64')
})

test('a bad reply is refused before anything is written, naming the message', () => {
  const bad = (reply: unknown) => () => replyToMessages(reply as never, at)
  assert.throws(bad([{ role: 'user', content: 'hi' }]), (error: unknown) => EngramError.is(error) && /reply\[0\]\.role "user"/.test(error.message))
  assert.throws(bad([{ role: 'assistant', content: [{ type: 'tool-call', toolName: 'x' }] }]), /reply\[0\]\.content\[0\]\.toolCallId must be a string/)
  assert.throws(bad([{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'x', output: 'done' }] }]), /output must be a tool output/)
  assert.throws(bad([{ role: 'assistant', content: 42 }]), /content must be text or a list of parts/)
})
