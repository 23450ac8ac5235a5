import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { excerpt, salvageStructuredOutput, structuredSystemPrompt } from './structured-output.ts'

const schema = z.object({ lessons: z.array(z.string().describe('one lesson')) })

describe('structured output helpers', () => {
  it('writes the schema, with its descriptions, into the system prompt', () => {
    const prompt = structuredSystemPrompt('Extract lessons.', schema, 'lessons')
    assert.match(prompt, /^Extract lessons\.\n\n/)
    assert.match(prompt, /one JSON object \(lessons\)/)
    assert.match(prompt, /"one lesson"/)
    assert.match(structuredSystemPrompt(undefined, z.string().transform((value) => value.length), undefined), /^Answer with one JSON object/)
  })

  it('salvages fenced or embedded JSON and still validates it', () => {
    assert.deepEqual(salvageStructuredOutput('```json\n{"lessons": ["a"]}\n```', schema), { ok: true, value: { lessons: ['a'] } })
    assert.deepEqual(salvageStructuredOutput('Sure: {"lessons": []} done', schema), { ok: true, value: { lessons: [] } })
    assert.deepEqual(salvageStructuredOutput('no json here', schema), { ok: false, reason: 'not_json', detail: 'the answer is not JSON' })
    const wrong = salvageStructuredOutput('{"lessons": "a"}', schema)
    assert.ok(!wrong.ok && wrong.reason === 'schema' && wrong.detail.startsWith('lessons:'))
  })

  it('excerpts are one line and short', () => {
    assert.equal(excerpt('a\n  b'), 'a b')
    assert.equal(excerpt(''), '(empty)')
    assert.equal(excerpt('x'.repeat(500)).length, 201)
  })
})
