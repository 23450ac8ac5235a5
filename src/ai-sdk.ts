/**
 * `engram/ai-sdk`: engram for the Vercel AI SDK — its agent tools (`tools: toAiSdkTools(turn.tools)`)
 * and a language model middleware that primes before and records after every turn
 * (`wrapLanguageModel({ model, middleware: engramMiddleware({ mind, sessionId, user }) })`).
 */
export { toAiSdkTools } from './tools/ai-sdk-tools.ts'
export { engramMiddleware } from './interfaces/ai-sdk/middleware.ts'
export type { EngramMiddleware, EngramMiddlewareOptions } from './interfaces/ai-sdk/middleware.ts'
