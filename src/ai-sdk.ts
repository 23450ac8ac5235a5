/** `engram/ai-sdk`: engram's agent tools for the Vercel AI SDK (`tools: toAiSdkTools(turn.tools)`). */
export { toAiSdkTools } from './interfaces/ai-sdk/tools.ts'
