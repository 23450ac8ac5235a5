/**
 * Configuration is resolved once, here: defaults < `config.json` in the home < `ENGRAM_*`
 * environment variables < flags. Every mistake is collected (not just the first), each with its
 * fix, and the result is frozen and records where each value came from.
 */
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve as resolvePath } from 'node:path'
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { LogLevel } from '../core/logger.ts'
import { SETTINGS, SETTINGS_BY_KEY, type SettingSpec } from './schema.ts'
import type { EmbedProviderName, LlmProviderName, MemoryMode } from './schema.ts'

export type ValueSource = 'default' | 'file' | 'env' | 'flag'

export interface ConfigValues {
  home: string
  agent: string
  project: string | undefined
  storage: { url: string | undefined; schema: string }
  memory: { mode: MemoryMode; maxFileBytes: number; episodic: boolean; extractFromTurns: boolean }
  llm: {
    provider: LlmProviderName
    baseUrl: string | undefined
    apiKey: string | undefined
    model: string | undefined
    fastModel: string | undefined
    timeoutMs: number
    maxRetries: number
  }
  embed: {
    provider: EmbedProviderName
    baseUrl: string | undefined
    apiKey: string | undefined
    model: string | undefined
    dimensions: number | undefined
    path: string | undefined
    timeoutMs: number
  }
  context: {
    provider: 'lcm' | 'simple'
    budget: number
    freshTail: number
    threshold: number
    leafChunk: number
  }
  learning: { patternMonitorMode: 'off' | 'passive' | 'active' }
  limits: { messageChars: number; toolInputChars: number; queryChars: number }
  jobs: { eager: boolean }
  mcp: { tools: 'essential' | 'all' }
  serve: {
    host: string
    port: number
    tokens: string | undefined
    maintain: string
    mcpSessionsPerCaller: number
    mcpSessions: number
    headersTimeoutMs: number
    requestTimeoutMs: number
    keepAliveTimeoutMs: number
    maxConnectionsPerClient: number
    maxConnections: number
    workers: number
    requestsInWork: number
    requestsQueued: number
  }
  consolidation: { llmCalls: number; llmTokens: number; backlogDays: number }
  log: { level: LogLevel }
  retrieval: {
    fusion: 'weighted' | 'rrf'
    lexicalWeight: number
    denseWeight: number
    recencyWeight: number
    recencyHalfLifeDays: number
    frequencyWeight: number
    graph: boolean
    graphWeight: number
    candidates: number
    dense: 'auto' | 'knn' | 'rerank' | 'off'
    denseKnnMaxUnits: number
    nearWeight: number
    farWeight: number
    relatedWeight: number
    speakerBoost: number
    sessionWeight: number
    informationWeight: number
    agentMessageWeight: number
    restatementSimilarity: number
    expansionWeight: number
    wordVectorRerankCandidates: number
  }
  priming: {
    greetingBudget: number
    questionBudget: number
    requestBudget: number
    heartbeatBudget: number
    activityHours: number
  }
}

export interface ResolvedConfig {
  readonly values: Readonly<ConfigValues>
  /** Where each dotted key's value came from. */
  readonly sources: Readonly<Record<string, ValueSource>>
  /** The config file that was read, if any. */
  readonly file: string | undefined
}

export interface ConfigProblem {
  key: string
  source: ValueSource
  message: string
  fix: string
}

export interface ResolveConfigOptions {
  /** Environment to read `ENGRAM_*` from (pass `process.env` at the edge; tests pass their own). */
  env?: Record<string, string | undefined>
  /** Values from command-line flags or from code, by dotted key (`{ 'memory.mode': 'off' }`). */
  flags?: Record<string, unknown>
  /** Read no config file (tests; `engram config --no-file`). */
  ignoreFile?: boolean
}

/** Resolve the configuration; throws one `config_invalid` EngramError listing every problem. */
export function resolveConfig(options: ResolveConfigOptions = {}): ResolvedConfig {
  const env = options.env ?? {}
  const flags = options.flags ?? {}
  const problems: ConfigProblem[] = []
  const raw: Record<string, { value: unknown; source: ValueSource }> = {}

  for (const spec of SETTINGS) {
    if (spec.default !== undefined) raw[spec.key] = { value: spec.default, source: 'default' }
  }

  for (const key of Object.keys(flags)) {
    if (!SETTINGS_BY_KEY.has(key)) {
      problems.push({ key, source: 'flag', message: `unknown setting "${key}"`, fix: `use one of: ${[...SETTINGS_BY_KEY.keys()].join(', ')}` })
    }
  }

  // The home decides where config.json is, so it is resolved first from the higher sources.
  const homeRaw = flags.home ?? env.ENGRAM_HOME
  const home = resolvePath(typeof homeRaw === 'string' && homeRaw !== '' ? expandHome(homeRaw, env) : join(env.HOME ?? homedir(), '.engram'))

  let file: string | undefined
  if (!options.ignoreFile) {
    const path = join(home, 'config.json')
    let text: string | undefined
    try {
      text = readFileSync(path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        problems.push({ key: 'config.json', source: 'file', message: `cannot read ${path}: ${(error as Error).message}`, fix: 'check the file permissions' })
      }
    }
    if (text !== undefined) {
      file = path
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch (error) {
        problems.push({ key: 'config.json', source: 'file', message: `${path} is not valid JSON: ${(error as Error).message}`, fix: 'fix the JSON syntax, or delete the file to use the defaults' })
      }
      if (parsed !== undefined) {
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          problems.push({ key: 'config.json', source: 'file', message: `${path} must hold a JSON object`, fix: 'write settings as {"memory": {"mode": "copilot"}}' })
        } else {
          for (const [key, value] of flatten(parsed as Record<string, unknown>)) {
            if (!SETTINGS_BY_KEY.has(key)) {
              problems.push({ key, source: 'file', message: `unknown setting "${key}" in ${path}`, fix: `remove it, or use one of: ${[...SETTINGS_BY_KEY.keys()].join(', ')}` })
              continue
            }
            raw[key] = { value, source: 'file' }
          }
        }
      }
    }
  }

  for (const spec of SETTINGS) {
    const value = env[spec.env]
    if (value !== undefined && value !== '') raw[spec.key] = { value, source: 'env' }
  }
  for (const [key, value] of Object.entries(flags)) {
    if (SETTINGS_BY_KEY.has(key) && value !== undefined) raw[key] = { value, source: 'flag' }
  }
  raw.home = { value: home, source: raw.home?.source ?? 'default' }

  const values: Record<string, unknown> = {}
  const sources: Record<string, ValueSource> = {}
  for (const spec of SETTINGS) {
    const entry = raw[spec.key]
    if (!entry) continue
    const coerced = coerce(spec, entry.value, entry.source, env, problems)
    if (coerced !== undefined) {
      values[spec.key] = coerced
      sources[spec.key] = entry.source
    }
  }

  crossCheck(values, sources, problems)

  if (problems.length > 0) {
    const lines = problems.map((p, i) => `  ${i + 1}. ${p.key} (${p.source}): ${p.message} — fix: ${p.fix}`)
    throw new EngramError({
      code: ErrorCode.configInvalid,
      category: 'user',
      message: `The configuration has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${lines.join('\n')}`,
      details: { problems },
    })
  }

  return Object.freeze({
    values: deepFreeze(unflatten(values)) as unknown as ConfigValues,
    sources: Object.freeze(sources),
    file,
  })
}

function coerce(spec: SettingSpec, value: unknown, source: ValueSource, env: Record<string, string | undefined>, problems: ConfigProblem[]): unknown {
  const where = source === 'env' ? `${spec.env}=${JSON.stringify(value)}` : `${spec.key} = ${JSON.stringify(value)}`
  const bad = (message: string, fix: string): undefined => {
    problems.push({ key: spec.key, source, message: `${where}: ${message}`, fix: `${fix} (set "${spec.key}" in config.json or ${spec.env})` })
    return undefined
  }
  const type = spec.type
  switch (type.kind) {
    case 'string':
    case 'secret':
      return typeof value === 'string' ? value : bad('must be a string', 'write it in quotes')
    case 'path':
      return typeof value === 'string' && value !== '' ? resolvePath(expandHome(value, env)) : bad('must be a folder path', 'give a path')
    case 'boolean': {
      if (typeof value === 'boolean') return value
      if (typeof value === 'string' && /^(true|1|yes|on)$/i.test(value)) return true
      if (typeof value === 'string' && /^(false|0|no|off)$/i.test(value)) return false
      return bad('must be true or false', 'use true or false')
    }
    case 'integer':
    case 'number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN
      if (!Number.isFinite(n)) return bad(`must be a ${type.kind}`, `give a ${type.kind}`)
      if (type.kind === 'integer' && !Number.isInteger(n)) return bad('must be a whole number', 'drop the fraction')
      if (type.min !== undefined && n < type.min) return bad(`must be at least ${type.min}`, `use a value ≥ ${type.min}`)
      if (type.max !== undefined && n > type.max) return bad(`must be at most ${type.max}`, `use a value ≤ ${type.max}`)
      return n
    }
    case 'enum':
      return typeof value === 'string' && type.values.includes(value) ? value : bad(`must be one of ${type.values.join(', ')}`, `use one of ${type.values.join(' | ')}`)
  }
}

function crossCheck(values: Record<string, unknown>, sources: Record<string, ValueSource>, problems: ConfigProblem[]): void {
  const provider = values['llm.provider']
  if (provider === 'openai-compatible' && !values['llm.baseUrl']) {
    problems.push({ key: 'llm.baseUrl', source: sources['llm.provider'] ?? 'default', message: 'llm.provider is openai-compatible but no base URL is set', fix: 'set llm.baseUrl or ENGRAM_LLM_BASE_URL (e.g. http://localhost:11434/v1 for Ollama)' })
  }
  if ((provider === 'openai' || provider === 'anthropic' || provider === 'openai-compatible') && !values['llm.model']) {
    problems.push({ key: 'llm.model', source: sources['llm.provider'] ?? 'default', message: `llm.provider is ${provider} but no model is set`, fix: 'set llm.model or ENGRAM_LLM_MODEL' })
  }
  if (values['embed.provider'] === 'openai-compatible') {
    if (!values['embed.baseUrl']) problems.push({ key: 'embed.baseUrl', source: sources['embed.provider'] ?? 'default', message: 'embed.provider is openai-compatible but no base URL is set', fix: 'set embed.baseUrl or ENGRAM_EMBED_BASE_URL' })
    if (!values['embed.model']) problems.push({ key: 'embed.model', source: sources['embed.provider'] ?? 'default', message: 'embed.provider is openai-compatible but no model is set', fix: 'set embed.model or ENGRAM_EMBED_MODEL' })
  }
  if (values['embed.provider'] === 'onnx' && !values['embed.path']) {
    problems.push({ key: 'embed.path', source: sources['embed.provider'] ?? 'default', message: 'embed.provider is onnx but no model folder is set', fix: 'set embed.path or ENGRAM_EMBED_PATH to a folder holding model.onnx and tokenizer.json' })
  }
}

function expandHome(path: string, env: Record<string, string | undefined>): string {
  return path === '~' || path.startsWith('~/') ? join(env.HOME ?? homedir(), path.slice(1)) : path
}

function* flatten(object: Record<string, unknown>, prefix = ''): Generator<[string, unknown]> {
  for (const [key, value] of Object.entries(object)) {
    const dotted = prefix ? `${prefix}.${key}` : key
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && !SETTINGS_BY_KEY.has(dotted)) yield* flatten(value as Record<string, unknown>, dotted)
    else yield [dotted, value]
  }
}

function unflatten(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const spec of SETTINGS) {
    const parts = spec.key.split('.')
    let node = out
    for (const part of parts.slice(0, -1)) {
      node[part] ??= {}
      node = node[part] as Record<string, unknown>
    }
    node[parts[parts.length - 1] as string] = flat[spec.key]
  }
  return out
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

/** The value of a dotted key, for display (`engram config`). Secrets are masked. */
export function displayValue(config: ResolvedConfig, key: string): string {
  const spec = SETTINGS_BY_KEY.get(key)
  let node: unknown = config.values
  for (const part of key.split('.')) node = (node as Record<string, unknown> | undefined)?.[part]
  if (node === undefined) return '(unset)'
  if (spec?.type.kind === 'secret') return '********'
  return String(node)
}
