/**
 * Reading the JSON columns back. They are written by engram, but a row edited by hand (or by a
 * buggy older version) must not make a whole read fail: what cannot be parsed is returned as it
 * is, under a key that says so, rather than dropped.
 */

/** A JSON object column; a non-object value is wrapped, unparseable text kept under `unparsed`. */
export function parseJsonObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
    return { value }
  } catch {
    return { unparsed: text }
  }
}

/** A JSON array-of-strings column; anything else becomes the single string it was stored as. */
export function parseJsonStrings(text: string | null): string[] {
  if (text === null) return []
  try {
    const value: unknown = JSON.parse(text)
    if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)))
    return [typeof value === 'string' ? value : text]
  } catch {
    return [text]
  }
}
