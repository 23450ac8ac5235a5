/** Test harness for the context providers: a real embedded backend in a temp home. */
import { ManualClock } from '../../../core/clock.ts'
import type { MessageInput } from '../../../core/message.ts'
import type { Llm } from '../../../llm/contracts.ts'
import { createNoneLlm } from '../../../llm/none-llm.ts'
import type { Backend } from '../../../storage/contracts.ts'
import { openEmbeddedBackend } from '../../../storage/embedded.ts'
import { makeTempHome, type TempHome } from '../../../testing/temp-home.ts'
import { type ContextProviderKind, createContextProvider } from '../create-provider.ts'
import type { LcmContextProvider } from '../lcm-provider.ts'
import type { ContextProviderSettings } from '../settings.ts'
import type { SimpleContextProvider } from '../simple-provider.ts'

export interface Harness {
  tmp: TempHome
  clock: ManualClock
  backend: Backend
  provider(kind: 'lcm', settings?: Partial<ContextProviderSettings>, llm?: Llm): LcmContextProvider
  provider(kind: 'simple', settings?: Partial<ContextProviderSettings>, llm?: Llm): SimpleContextProvider
  close(): Promise<void>
}

export function openHarness(): Harness {
  const tmp = makeTempHome('engram-context-')
  const clock = new ManualClock('2026-03-01T09:00:00Z')
  const backend = openEmbeddedBackend({ home: tmp.home, agent: 'default', clock })
  return {
    tmp,
    clock,
    backend,
    provider: ((kind: ContextProviderKind, settings: Partial<ContextProviderSettings> = {}, llm: Llm = createNoneLlm()) =>
      createContextProvider(kind, {
        store: backend.context,
        index: backend.index,
        locks: backend.locks,
        clock,
        llm,
        documents: backend.documents,
        settings,
      })) as Harness['provider'],
    async close() {
      await backend.close()
      tmp.cleanup()
    },
  }
}

const WORDS =
  'the deploy pipeline failed because the cache key changed; we agreed to pin node 24 and keep sqlite in WAL mode. Ada prefers metric units. The budget is 4200 euros. Bob will fix the flaky test by Friday. Remember the staging database lives on host db-7. Tea or coffee? The migration must run before noon. Use pnpm, never npm, in the monorepo.'
    .split(' ')

/** Deterministic PRNG (mulberry32), under the name the context tests know it by. */
export { seededRandom as prng } from '../../../test-support/seeded-random.ts'

/** A message of roughly `words` words, built from a small vocabulary with sentence ends. */
export function randomMessage(random: () => number, index: number, words: number): MessageInput {
  const parts: string[] = [`m${index}`]
  for (let i = 0; i < words; i++) parts.push(WORDS[Math.floor(random() * WORDS.length)]!)
  const role = index % 2 === 0 ? 'user' : 'assistant'
  return { role, content: `${parts.join(' ')}.` }
}
