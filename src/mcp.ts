/** `engram/mcp`: serve a mind's memory over the Model Context Protocol (what `engram mcp` runs). */
export { createMcpServer, TOOL_ERROR_META } from './interfaces/mcp/server.ts'
export { createMindMcpServer } from './interfaces/mcp/mind-server.ts'
export type { MindMcpServerOptions } from './interfaces/mcp/mind-server.ts'
export { serveStdio } from './interfaces/mcp/stdio.ts'
export { createMemoryResources } from './interfaces/mcp/memory-resources.ts'
