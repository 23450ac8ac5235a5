/**
 * Reading rows back. `json` columns arrive parsed; a row edited by hand (or by a buggy older
 * version) must not make a whole read fail, so a value that is not an object is wrapped, as the
 * SQLite backend does (`../sqlite/json.ts`), rather than dropped.
 */

/** A `json` column meant to hold an object. */
export function jsonObject(value: unknown): Record<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  return { value }
}
