import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startFakeOpenAiServer } from '../testing/fake-openai-server.ts'
import { createLlm } from './create-llm.ts'
import { createOfflineHashEmbedder } from './embedders/offline-hash-embedder.ts'
import { createOpenAiCompatibleEmbedder } from './embedders/openai-compatible-embedder.ts'
import { createNoneLlm } from './none-llm.ts'
import { probeEmbedder, probeLlm } from './probe.ts'

describe('probes', () => {
  it('probeLlm: none, success and failure', async () => {
    const none = await probeLlm(createNoneLlm())
    assert.deepEqual(none.ok, false)
    assert.equal(none.detail, 'no LLM configured (offline paths in use)')
    assert.ok(!none.ok && /ENGRAM_LLM_PROVIDER/.test(none.fix))

    const server = await startFakeOpenAiServer()
    try {
      const llm = createLlm({ provider: 'openai-compatible', baseUrl: server.url, apiKey: undefined, model: 'big', fastModel: 'small', timeoutMs: 2000, maxRetries: 0 })
      server.enqueue({ json: { ok: true } }, { fail: { status: 401, body: { error: { message: 'bad key' } } } })
      const ok = await probeLlm(llm)
      assert.ok(ok.ok, JSON.stringify(ok))
      assert.match(ok.detail, /openai-compatible small/)
      assert.equal(server.requests[0]?.body.model, 'small')
      const failed = await probeLlm(llm)
      assert.ok(!failed.ok)
      assert.match(failed.detail, /401: bad key/)
      assert.match(failed.fix, /ENGRAM_LLM_API_KEY/)
    } finally {
      await server.close()
    }
  })

  it('probeEmbedder: none, offline and a failing remote', async () => {
    const disabled = await probeEmbedder(null)
    assert.ok(!disabled.ok && /ENGRAM_EMBED_PROVIDER/.test(disabled.fix))
    const offline = await probeEmbedder(createOfflineHashEmbedder())
    assert.ok(offline.ok)
    assert.match(offline.detail, /offline:hash-v1:384: 384 dimensions in \d+ ms/)

    const server = await startFakeOpenAiServer()
    try {
      server.enqueueEmbeddings({ fail: { status: 404, body: { error: { message: 'model not found' } } } })
      const remote = createOpenAiCompatibleEmbedder({ baseUrl: server.url, model: 'm', apiKey: undefined, dimensions: 8, timeoutMs: 1000 })
      const failed = await probeEmbedder(remote)
      assert.ok(!failed.ok)
      assert.match(failed.detail, /model not found/)
      assert.match(failed.fix, /ENGRAM_EMBED_BASE_URL/)
    } finally {
      await server.close()
    }
  })
})
