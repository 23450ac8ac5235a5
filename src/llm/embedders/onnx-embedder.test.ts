import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, sep } from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { EngramError } from '../../core/errors.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import { createEmbedder } from './create-embedder.ts'
import { createOnnxEmbedder } from './onnx-embedder.ts'

function onnxConfig(path: string | undefined, dimensions?: number) {
  return { provider: 'onnx' as const, baseUrl: undefined, apiKey: undefined, model: undefined, dimensions, path, timeoutMs: 1000 }
}

/** A folder shaped like a sentence-transformers ONNX export (the files' contents are not read here). */
function writeModelFolder(root: string, options: { hiddenSize?: number; layout?: 'onnx' | 'root' } = {}): string {
  const folder = join(root, 'all-MiniLM-L6-v2')
  mkdirSync(join(folder, 'onnx'), { recursive: true })
  writeFileSync(join(folder, 'config.json'), JSON.stringify(options.hiddenSize === undefined ? { model_type: 'bert' } : { model_type: 'bert', hidden_size: options.hiddenSize }))
  writeFileSync(join(folder, 'tokenizer.json'), '{}')
  writeFileSync(options.layout === 'root' ? join(folder, 'model_quantized.onnx') : join(folder, 'onnx', 'model.onnx'), 'not a real model')
  return folder
}

describe('onnx embedder', () => {
  let temp: TempHome
  beforeEach(() => {
    temp = makeTempHome()
    mkdirSync(temp.home, { recursive: true })
  })
  afterEach(() => temp.cleanup())

  it('without @huggingface/transformers installed, embed() is unsupported with the install fix', async () => {
    const embedder = createEmbedder(onnxConfig(writeModelFolder(temp.home, { hiddenSize: 384 })))
    assert.ok(embedder)
    assert.equal(embedder.id, 'onnx:all-MiniLM-L6-v2:384')
    assert.equal(embedder.kind, 'local')
    assert.equal(embedder.dimensions, 384)
    await assert.rejects(embedder.embed(['hello']), (error) => {
      assert.ok(EngramError.is(error))
      assert.equal(error.code, 'unsupported')
      assert.match(error.fix ?? '', /npm install @huggingface\/transformers/)
      assert.match(error.fix ?? '', /ENGRAM_EMBED_PATH/)
      return true
    })
  })

  it('a missing folder, or one without model files, is config_invalid saying what is missing', () => {
    const isConfigInvalid = (pattern: RegExp) => (error: unknown) => EngramError.is(error) && error.code === 'config_invalid' && pattern.test(error.message) && /ENGRAM_EMBED_PATH/.test(error.fix ?? '')
    assert.throws(() => createEmbedder(onnxConfig(join(temp.home, 'nope'))), isConfigInvalid(/does not exist/))
    const empty = join(temp.home, 'empty-model')
    mkdirSync(empty)
    assert.throws(() => createEmbedder(onnxConfig(empty)), isConfigInvalid(/lacks config\.json, tokenizer\.json, onnx\/model\.onnx/))
    assert.throws(() => createEmbedder(onnxConfig(undefined)), (error) => EngramError.is(error) && error.code === 'config_invalid')
  })

  it('without hidden_size the dimensions must be configured', () => {
    const folder = writeModelFolder(temp.home)
    assert.throws(() => createEmbedder(onnxConfig(folder)), (error) => EngramError.is(error) && /ENGRAM_EMBED_DIMENSIONS/.test(error.fix ?? ''))
    assert.equal(createEmbedder(onnxConfig(folder, 16))?.dimensions, 16)
  })

  it('loads from the local folder only, with mean pooling, and returns unit vectors in order', async () => {
    const folder = writeModelFolder(temp.home, { hiddenSize: 2, layout: 'root' })
    const env = { allowRemoteModels: true, allowLocalModels: false, localModelPath: '/models/' }
    const pipelineCalls: unknown[][] = []
    const extractorCalls: unknown[][] = []
    const embedder = createOnnxEmbedder({
      path: folder,
      dimensions: undefined,
      importTransformers: async () => ({
        env,
        pipeline: async (...args: unknown[]) => {
          pipelineCalls.push(args)
          return async (texts: string[], options: unknown) => {
            extractorCalls.push([texts, options])
            return { dims: [texts.length, 2], data: Float32Array.from(texts.flatMap((text) => [text.length, 1])) }
          }
        },
      }),
    })
    const vectors = await embedder.embed(['abc', 'a'])
    assert.deepEqual(env, { allowRemoteModels: false, allowLocalModels: true, localModelPath: `${temp.home}${sep}` })
    assert.deepEqual(pipelineCalls, [['feature-extraction', 'all-MiniLM-L6-v2', { local_files_only: true, subfolder: '', dtype: 'q8' }]])
    assert.deepEqual(extractorCalls[0]?.[1], { pooling: 'mean', normalize: true })
    assert.ok(Math.abs((vectors[0]?.[0] as number) - 3 / Math.hypot(3, 1)) < 1e-6)
    assert.ok(Math.abs((vectors[1]?.[0] as number) - 1 / Math.SQRT2) < 1e-6)
    await embedder.embed(['again'])
    assert.equal(pipelineCalls.length, 1) // the model loads once
  })
})
