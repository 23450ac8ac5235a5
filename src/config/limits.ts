/**
 * The size limits on what enters engram (decision 0026): messages, agent tool inputs and queries.
 * Each is a setting (`limits.*`, an `ENGRAM_MAX_*` variable); this file gives their defaults to
 * code that runs without a resolved configuration and words the error that refuses an input, so
 * every refusal says the limit, the setting and how to raise it.
 */
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { ConfigValues } from './resolve.ts'
import { SETTINGS_BY_KEY } from './schema.ts'

export type Limits = ConfigValues['limits']
export type LimitName = keyof Limits

function specOf(name: LimitName): { key: string; env: string; default: number } {
  const spec = SETTINGS_BY_KEY.get(`limits.${name}`)
  if (!spec || typeof spec.default !== 'number') throw new Error(`limits.${name} is not a numeric setting`)
  return { key: spec.key, env: spec.env, default: spec.default }
}

/** The defaults of the schema, for code given no configuration (tests, a provider built by hand). */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  messageChars: specOf('messageChars').default,
  toolInputChars: specOf('toolInputChars').default,
  queryChars: specOf('queryChars').default,
})

/** How to raise a limit: the setting, its variable, and a value that would take `size`. */
export function raiseLimitFix(name: LimitName, size?: number): string {
  const { key, env } = specOf(name)
  const example = size === undefined ? '' : ` (e.g. ${env}=${size})`
  return `send less, or raise the limit: set "${key}" in config.json or ${env}${example}`
}

/** The sentence that says what is over which limit. */
export function overLimitMessage(name: LimitName, what: string, size: number, max: number): string {
  return `${what} is ${size.toLocaleString('en-US')} characters, over the limit of ${max.toLocaleString('en-US')} (${specOf(name).key}).`
}

/** The error that refuses an input over a limit (code `limit_exceeded`, category user). */
export function overLimit(name: LimitName, what: string, size: number, max: number): EngramError {
  const { key, env } = specOf(name)
  return new EngramError({
    code: ErrorCode.limitExceeded,
    category: 'user',
    message: overLimitMessage(name, what, size, max),
    fix: raiseLimitFix(name, size),
    details: { limit: max, size, setting: key, env },
  })
}

/** Throws `limit_exceeded` when `text` is longer than `max`. */
export function checkLength(name: LimitName, what: string, text: string, max: number): void {
  if (text.length > max) throw overLimit(name, what, text.length, max)
}
