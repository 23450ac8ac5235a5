import { createHash } from 'node:crypto'

/** sha256 hex of a string or bytes: how files and index units are compared for change. */
export function contentHash(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}
