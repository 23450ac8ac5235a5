import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { EngramError } from '../core/errors.ts'
import { cosineSimilarity } from '../llm/embedders/vector-math.ts'
import { createFakeEmbedder, createFakeLlm } from './fake-models.ts'

const schema = z.object({ summary: z.string() })

describe('fake models', () => {
  it('createFakeLlm answers from the responder, validates objects and records calls', async () => {
    const llm = createFakeLlm((call) => (call.kind === 'object' ? { summary: `for ${call.model}` } : `text from ${call.tier}`))
    assert.equal(llm.available, true)
    assert.equal(llm.provider, 'fake')
    assert.deepEqual(await llm.generateObject({ schema, name: 'summary', messages: [{ role: 'user', content: 'x' }], tier: 'fast' }), { summary: 'for fake-fast' })
    assert.equal(await llm.generateText({ messages: [{ role: 'user', content: 'y' }] }), 'text from planning')
    assert.deepEqual(llm.calls.map((call) => [call.kind, call.tier, call.kind === 'object' ? call.schemaName : undefined]), [['object', 'fast', 'summary'], ['text', 'planning', undefined]])
  })

  it('an answer that violates the schema is llm_invalid_output; a thrown EngramError passes through', async () => {
    const llm = createFakeLlm(() => ({ summary: 7 }))
    await assert.rejects(llm.generateObject({ schema, messages: [] }), (error) => EngramError.is(error) && error.code === 'llm_invalid_output')
    const failing = createFakeLlm(() => {
      throw new EngramError({ code: 'llm_timeout', category: 'provider', message: 'slow' })
    })
    await assert.rejects(failing.generateText({ messages: [] }), (error) => EngramError.is(error) && error.code === 'llm_timeout')
  })

  it('createFakeEmbedder is deterministic, unit length, and ranks shared words higher', async () => {
    const embedder = createFakeEmbedder(64)
    assert.equal(embedder.id, 'fake:hash:64')
    const [tea, greenTea, taxes] = await embedder.embed(['user likes tea', 'user likes green tea', 'quarterly taxes are due'], 'query')
    assert.ok(tea && greenTea && taxes)
    assert.equal(tea.length, 64)
    assert.ok(Math.abs(Math.hypot(...tea) - 1) < 1e-5)
    assert.ok(cosineSimilarity(tea, greenTea) > cosineSimilarity(tea, taxes))
    assert.deepEqual(embedder.calls[0]?.purpose, 'query')
    assert.equal(createFakeEmbedder().dimensions, 32)
  })
})
