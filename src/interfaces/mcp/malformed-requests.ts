/**
 * Requests the SDK's transports would not answer as the client's mistake (decision 0055). A
 * message that is not a valid JSON-RPC message — a request whose params are a string, a number or
 * an array — fails the transports' own parse: over stdio it goes to onerror only and the client
 * waits for an answer that never comes; over HTTP it is a 400 "parse error" with no id, which a
 * client reports as a failed POST. A message with an id and a method is a request all the same:
 * it gets an invalid-params error (-32602) with its id, saying what was wrong.
 */
import { type JSONRPCErrorResponse, ErrorCode as McpErrorCode, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'

/** The invalid-params answer to `message` when it is a request no transport would read; else undefined. */
export function malformedRequestAnswer(message: unknown): JSONRPCErrorResponse | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message) || JSONRPCMessageSchema.safeParse(message).success) return undefined
  const { id, method, params } = message as { id?: unknown; method?: unknown; params?: unknown }
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof method !== 'string') return undefined
  const got = params === null ? 'null' : Array.isArray(params) ? 'an array' : typeof params
  const why = params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)) ? `params must be a JSON object; got ${got}` : 'it is not a valid JSON-RPC 2.0 request'
  return { jsonrpc: '2.0', id, error: { code: McpErrorCode.InvalidParams, message: `${method}: ${why}.` } }
}
