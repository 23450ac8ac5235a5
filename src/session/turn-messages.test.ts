import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MessagePart } from '../core/message-parts.ts'
import type { AssembledItem } from '../memory/context/provider.ts'
import { toTurnMessages } from './turn-messages.ts'

let position = 0
function message(role: AssembledItem['role'], content: string, parts?: MessagePart[]): AssembledItem {
  position++
  return { kind: 'message', role, content, tokens: 1, position, messageIds: [position], ...(parts ? { parts } : {}) }
}
const call = (id: string, name = 'memorize'): MessagePart => ({ type: 'tool-call', toolCallId: id, toolName: name, input: { q: id } })
const result = (id: string, name = 'memorize'): MessagePart => ({ type: 'tool-result', toolCallId: id, toolName: name, output: { type: 'text', value: `ok ${id}` } })

test('a call followed by its result comes back as the model messages it was', () => {
  const messages = toTurnMessages([
    message('user', 'remember cats', undefined),
    message('assistant', 'rendered', [{ type: 'reasoning', text: 'hmm' }, { type: 'text', text: 'Sure.' }, call('c1')]),
    message('tool', 'rendered', [result('c1')]),
    message('assistant', 'Done.'),
  ])
  assert.deepEqual(messages, [
    { role: 'user', content: 'remember cats' },
    { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'memorize', input: { q: 'c1' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'memorize', output: { type: 'text', value: 'ok c1' } }] },
    { role: 'assistant', content: 'Done.' },
  ])
})

test('a result whose call was folded away is text in a user message, after the run of results', () => {
  const summary: AssembledItem = { kind: 'summary', role: 'user', content: '[summary sum_1] the agent memorized cats', tokens: 1, position: 0, messageIds: [1, 2], summaryId: 'sum_1' }
  const messages = toTurnMessages([summary, message('tool', 'x', [result('c1')]), message('assistant', 'Done.')])
  assert.deepEqual(messages, [
    { role: 'user', content: summary.content },
    { role: 'user', content: '[tool result memorize c1] ok c1' },
    { role: 'assistant', content: 'Done.' },
  ])
})

test('a call without a recorded result stays in the assistant message as text; ids are matched by position', () => {
  const messages = toTurnMessages([
    message('assistant', 'x', [call('call_1')]),
    message('user', 'and then?'),
    message('assistant', 'x', [call('call_1'), call('call_2')]),
    message('tool', 'x', [result('call_1'), result('call_9')]),
    message('tool', 'x', [result('call_2')]),
  ])
  assert.deepEqual(messages[0], { role: 'assistant', content: '[tool call memorize call_1] {"q":"call_1"}' })
  assert.deepEqual(
    messages.slice(2).map((m) => [m.role, typeof m.content === 'string' ? m.content : m.content.map((part) => part.type)]),
    [
      ['assistant', ['tool-call', 'tool-call']],
      ['tool', ['tool-result']],
      ['tool', ['tool-result']],
      ['user', '[tool result memorize call_9] ok call_9'],
    ],
  )
})

test('plain tool messages of the old text form are given as text', () => {
  assert.deepEqual(toTurnMessages([{ ...message('tool', 'saved'), name: 'memorize' }]), [{ role: 'user', content: '[tool result memorize] saved' }])
})
