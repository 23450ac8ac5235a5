/**
 * The `none` provider: no model configured. Callers check `available` and go straight to their
 * deterministic path; a call anyway is a programming slip and says how to configure a model.
 */
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { Llm } from './contracts.ts'

export const CONFIGURE_LLM_FIX =
  'set ENGRAM_LLM_PROVIDER (llm.provider) to openai, anthropic or openai-compatible, with ENGRAM_LLM_MODEL (and ENGRAM_LLM_API_KEY or ENGRAM_LLM_BASE_URL)'

/** An `Llm` that is not available; both calls throw `llm_not_configured`. */
export function createNoneLlm(): Llm {
  const notConfigured = (): never => {
    throw new EngramError({
      code: ErrorCode.llmNotConfigured,
      category: 'user',
      message: 'no LLM is configured (llm.provider is none), so this step has no model to call',
      fix: CONFIGURE_LLM_FIX,
    })
  }
  return {
    specificationVersion: 'engram-llm-v1',
    provider: 'none',
    available: false,
    modelFor: () => undefined,
    generateObject: async () => notConfigured(),
    generateText: async () => notConfigured(),
  }
}
