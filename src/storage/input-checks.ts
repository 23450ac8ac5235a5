/** Checks of what callers pass to a store, before it reaches a statement: the same refusals on every backend, with `invalid_argument`. */
import { EngramError, ErrorCode } from '../core/errors.ts'

export function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

/** The instant normalised to `toISOString()`. */
export function instant(value: string, name: string): string {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) throw invalid(`${name} must be an ISO-8601 instant, got ${JSON.stringify(value)}.`, `Pass ${name} as new Date(...).toISOString().`)
  return new Date(ms).toISOString()
}

export function requireText(value: string, name: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(`${name} must be a non-empty string.`, `Pass the ${name}.`)
  return value
}
