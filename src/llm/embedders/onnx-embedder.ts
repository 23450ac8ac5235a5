/**
 * Embeddings from a local ONNX model folder the user supplies (a sentence-transformers export:
 * `config.json`, `tokenizer.json`, and `onnx/model.onnx` or `model.onnx`), run through
 * `@huggingface/transformers` — an optional peer dependency, imported only when this embedder is
 * used. Remote models are switched off: nothing is ever downloaded.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve, sep } from 'node:path'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Embedder } from '../contracts.ts'
import { l2Normalize } from './vector-math.ts'

const TRANSFORMERS_PACKAGE = '@huggingface/transformers'
/** Texts per inference run: bounds the padded batch tensor's memory. */
const ONNX_BATCH_SIZE = 32

/** File suffix → transformers.js `dtype`, in order of preference. */
const MODEL_VARIANTS: readonly { suffix: string; dtype: string }[] = [
  { suffix: '', dtype: 'fp32' },
  { suffix: '_fp16', dtype: 'fp16' },
  { suffix: '_quantized', dtype: 'q8' },
  { suffix: '_int8', dtype: 'int8' },
  { suffix: '_uint8', dtype: 'uint8' },
  { suffix: '_q4', dtype: 'q4' },
]

export interface OnnxEmbedderSettings {
  /** The model folder. */
  path: string
  /** Overrides the size read from config.json (`hidden_size`). */
  dimensions: number | undefined
  /** How the optional package is imported; tests pass their own. */
  importTransformers?: () => Promise<unknown>
}

/** What we use of `@huggingface/transformers`, written structurally (the package is optional). */
interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string }
  pipeline(task: 'feature-extraction', model: string, options: Record<string, unknown>): Promise<FeatureExtractor>
}
type FeatureExtractor = (texts: string[], options: { pooling: 'mean'; normalize: boolean }) => Promise<{ data: ArrayLike<number>; dims: number[] }>

interface ModelFolder {
  path: string
  subfolder: string
  dtype: string
  dimensions: number
}

/**
 * An embedder over a local ONNX model, id `onnx:<folder name>:<dimensions>`. The folder is checked
 * now (`config_invalid` when files are missing); the package is loaded on the first `embed()`
 * (`unsupported` when it is not installed).
 */
export function createOnnxEmbedder(settings: OnnxEmbedderSettings): Embedder {
  const folder = inspectModelFolder(settings.path, settings.dimensions)
  const importTransformers = settings.importTransformers ?? (() => import(TRANSFORMERS_PACKAGE))
  let loading: Promise<FeatureExtractor> | undefined

  async function load(): Promise<FeatureExtractor> {
    let module: TransformersModule
    try {
      module = (await importTransformers()) as TransformersModule
    } catch (error) {
      throw new EngramError({
        code: ErrorCode.unsupported,
        category: 'user',
        message: `embed.provider is onnx but the optional package ${TRANSFORMERS_PACKAGE} is not installed`,
        fix: `run \`npm install ${TRANSFORMERS_PACKAGE}\` and set embed.path / ENGRAM_EMBED_PATH to the model folder, or set ENGRAM_EMBED_PROVIDER=offline`,
        cause: error,
      })
    }
    // Process-wide settings of the package: local files only, resolved from the folder's parent.
    module.env.allowRemoteModels = false
    module.env.allowLocalModels = true
    module.env.localModelPath = `${dirname(folder.path)}${sep}`
    try {
      return await module.pipeline('feature-extraction', basename(folder.path), { local_files_only: true, subfolder: folder.subfolder, dtype: folder.dtype })
    } catch (error) {
      throw onnxFailed(`cannot load the model in ${folder.path}: ${error instanceof Error ? error.message : String(error)}`, error)
    }
  }

  return {
    specificationVersion: 'engram-embedder-v1',
    id: `onnx:${basename(folder.path)}:${folder.dimensions}`,
    dimensions: folder.dimensions,
    kind: 'local',
    async embed(texts: string[]): Promise<Float32Array[]> {
      if (texts.length === 0) return []
      loading ??= load()
      let extractor: FeatureExtractor
      try {
        extractor = await loading
      } catch (error) {
        loading = undefined // installing the package or fixing the folder works without a restart
        throw error
      }
      const vectors: Float32Array[] = []
      for (let start = 0; start < texts.length; start += ONNX_BATCH_SIZE) {
        const batch = texts.slice(start, start + ONNX_BATCH_SIZE)
        let output: { data: ArrayLike<number>; dims: number[] }
        try {
          output = await extractor(batch, { pooling: 'mean', normalize: true })
        } catch (error) {
          throw onnxFailed(`inference failed: ${error instanceof Error ? error.message : String(error)}`, error)
        }
        const width = output.dims.at(-1)
        if (width !== folder.dimensions || output.data.length !== batch.length * folder.dimensions) {
          throw onnxFailed(`the model produced vectors of ${width} dimensions, expected ${folder.dimensions}; set embed.dimensions / ENGRAM_EMBED_DIMENSIONS to ${width}`)
        }
        for (let row = 0; row < batch.length; row++) {
          vectors.push(l2Normalize(Float32Array.from({ length: folder.dimensions }, (_, column) => output.data[row * folder.dimensions + column] as number)))
        }
      }
      return vectors
    },
  }
}

/** Check the folder holds a usable model; throws `config_invalid` saying what is missing. */
function inspectModelFolder(path: string, configuredDimensions: number | undefined): ModelFolder {
  const folder = resolve(path)
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw folderError(`the ONNX model folder ${folder} does not exist`, folder)
  }
  const missing = ['config.json', 'tokenizer.json'].filter((file) => !existsSync(join(folder, file)))
  let model: { subfolder: string; dtype: string } | undefined
  for (const subfolder of ['onnx', '']) {
    const variant = MODEL_VARIANTS.find(({ suffix }) => existsSync(join(folder, subfolder, `model${suffix}.onnx`)))
    if (variant) {
      model = { subfolder, dtype: variant.dtype }
      break
    }
  }
  if (!model) missing.push('onnx/model.onnx (or model.onnx)')
  if (missing.length > 0 || !model) throw folderError(`the ONNX model folder ${folder} lacks ${missing.join(', ')}`, folder)

  let dimensions = configuredDimensions
  if (dimensions === undefined) {
    try {
      const config = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')) as Record<string, unknown>
      const size = config.hidden_size ?? config.d_model ?? config.dim
      if (typeof size === 'number' && Number.isInteger(size) && size > 0) dimensions = size
    } catch {
      // reported below
    }
  }
  if (dimensions === undefined) {
    throw new EngramError({
      code: ErrorCode.configInvalid,
      category: 'user',
      message: `cannot tell the vector size of the model in ${folder} (config.json has no hidden_size)`,
      fix: 'set embed.dimensions / ENGRAM_EMBED_DIMENSIONS to the size of the vectors the model returns',
    })
  }
  return { path: folder, subfolder: model.subfolder, dtype: model.dtype, dimensions }
}

function folderError(message: string, folder: string): EngramError {
  return new EngramError({
    code: ErrorCode.configInvalid,
    category: 'user',
    message,
    fix: 'set embed.path / ENGRAM_EMBED_PATH to a folder holding config.json, tokenizer.json and onnx/model.onnx (a sentence-transformers ONNX export)',
    details: { path: folder },
  })
}

function onnxFailed(message: string, cause?: unknown): EngramError {
  return new EngramError({
    code: ErrorCode.embedFailed,
    category: 'provider',
    message: `local ONNX embedding failed: ${message}`,
    fix: 'check the model folder at embed.path / ENGRAM_EMBED_PATH (a sentence-transformers ONNX export), or set ENGRAM_EMBED_PROVIDER=offline',
    cause,
  })
}
