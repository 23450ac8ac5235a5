/**
 * `engram/test`: helpers for testing agents that use engram — and engram itself. A fake
 * OpenAI-compatible server with scripted answers and failures (the real provider code talks to it),
 * fake models implementing engram's interfaces, a clock that moves only when told, temp homes.
 */
export { startFakeOpenAiServer, fakeEmbeddingVector } from './testing/fake-openai-server.ts'
export type {
  FakeOpenAiServer,
  FakeOpenAiServerOptions,
  FakeChatStep,
  FakeToolCall,
  FakeEmbeddingStep,
  FakeRequest,
  FakeChatRequest,
  FakeEmbeddingRequest,
} from './testing/fake-openai-server.ts'
export { createFakeLlm, createFakeEmbedder } from './testing/fake-models.ts'
export type { FakeLlm, FakeLlmCall, FakeLlmResponder, FakeLlmOptions, FakeEmbedder } from './testing/fake-models.ts'
export { ManualClock } from './core/clock.ts'
export { makeTempHome } from './testing/temp-home.ts'
export type { TempHome } from './testing/temp-home.ts'
