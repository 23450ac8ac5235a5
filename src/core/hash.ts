import { hash } from 'node:crypto'

/**
 * sha256 hex of a string or bytes: how files and index units are compared for change. The one-shot
 * `hash` (no Hash object per call): every append hashes its message and the two before it again.
 */
export function contentHash(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex')
}
