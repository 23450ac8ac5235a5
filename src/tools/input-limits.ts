/**
 * The size limits of agent tool inputs (decision 0026): a query field whose bound is the
 * `limits.queryChars` setting, and a guard on the whole input of a call (`limits.toolInputChars`)
 * that answers before the tool parses anything. Both refusals say the limit, the setting and its
 * variable, as a readable `isError` result (a tool call never throws into the host).
 */
import { z } from 'zod'
import { DEFAULT_LIMITS, type Limits, overLimitMessage, raiseLimitFix } from '../config/limits.ts'
import { ErrorCode } from '../core/errors.ts'
import { type EngramTool, type ToolResult, toolErrorResult } from './tool.ts'

const capitalised = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}`

/** A search query of at most `maxChars` characters; the error message names the setting. */
export function queryField(maxChars: number = DEFAULT_LIMITS.queryChars): z.ZodString {
  return z
    .string()
    .trim()
    .min(1)
    .max(maxChars, { error: (issue) => `${overLimitMessage('queryChars', 'The query', String(issue.input ?? '').length, maxChars)} ${capitalised(raiseLimitFix('queryChars'))}` })
}

/**
 * `build` remembered per query limit: a session builds its tools every turn, and their JSON forms
 * are cached per schema object, so one limit must give back the same schema.
 */
export function perQueryLimit<T>(build: (maxQueryChars: number) => T): (maxQueryChars: number) => T {
  const known = new Map<number, T>()
  return (maxQueryChars) => {
    let schema = known.get(maxQueryChars)
    if (schema === undefined) {
      schema = build(maxQueryChars)
      known.set(maxQueryChars, schema)
    }
    return schema
  }
}

/**
 * Characters of a JSON-like value (strings, keys, numbers as written), counted only until they
 * pass `stop`: the size of a 10 MB argument is known after reading `stop` of it.
 */
export function inputChars(value: unknown, stop: number): number {
  let total = 0
  const pending: unknown[] = [value]
  while (pending.length > 0 && total <= stop) {
    const next = pending.pop()
    if (typeof next === 'string') total += next.length + 2
    else if (typeof next === 'number' || typeof next === 'boolean' || typeof next === 'bigint') total += String(next).length
    else if (next === null || next === undefined) total += 4
    else if (Array.isArray(next)) {
      total += 2 + next.length
      for (const item of next) pending.push(item)
    } else if (typeof next === 'object') {
      for (const [key, item] of Object.entries(next)) {
        total += key.length + 4
        pending.push(item)
      }
    }
  }
  return total
}

/** The result that refuses a call whose input is over `maxChars` characters. */
export function inputTooLarge(tool: string, size: number, maxChars: number): ToolResult & { isError: true } {
  const over = size > maxChars ? `more than ${maxChars.toLocaleString('en-US')}` : String(size)
  return toolErrorResult(
    {
      code: ErrorCode.limitExceeded,
      message: `${tool} was called with an input of ${over} characters, over the limit of ${maxChars.toLocaleString('en-US')} (limits.toolInputChars).`,
      fix: `${raiseLimitFix('toolInputChars')}; or write less per call (split a document over several files).`,
    },
    { data: { code: ErrorCode.limitExceeded, limit: maxChars } },
  )
}

/** `tool`, refusing inputs over `limits.toolInputChars` before it reads them. */
export function withInputLimit(tool: EngramTool, limits: Pick<Limits, 'toolInputChars'>): EngramTool {
  const max = limits.toolInputChars
  return {
    ...tool,
    execute(input) {
      const size = inputChars(input, max)
      return size > max ? Promise.resolve(inputTooLarge(tool.name, size, max)) : tool.execute(input)
    },
  }
}
