/**
 * Pick the working-memory provider the configuration names (`context.provider` /
 * ENGRAM_CONTEXT_PROVIDER). Both keep every message in the same tables.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { createLcmProvider, type LcmContextProvider } from './lcm-provider.ts'
import type { ContextProviderDeps } from './settings.ts'
import { createSimpleProvider, type SimpleContextProvider } from './simple-provider.ts'

export type ContextProviderKind = 'lcm' | 'simple'

export function createContextProvider(kind: 'lcm', deps: ContextProviderDeps): LcmContextProvider
export function createContextProvider(kind: 'simple', deps: ContextProviderDeps): SimpleContextProvider
export function createContextProvider(kind: ContextProviderKind, deps: ContextProviderDeps): LcmContextProvider | SimpleContextProvider
export function createContextProvider(kind: ContextProviderKind, deps: ContextProviderDeps): LcmContextProvider | SimpleContextProvider {
  if (kind === 'lcm') return createLcmProvider(deps)
  if (kind === 'simple') return createSimpleProvider(deps)
  throw new EngramError({
    code: ErrorCode.configInvalid,
    category: 'user',
    message: `Unknown context provider ${JSON.stringify(kind)}.`,
    fix: 'Set context.provider (ENGRAM_CONTEXT_PROVIDER) to lcm or simple.',
  })
}
