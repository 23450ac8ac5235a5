import type { PendingConfirmation } from '../../storage/contracts.ts'

/**
 * Reads a person's answer to the list of pending confirmations, as Anton asks it ("Save to
 * memory? (y/n/pick numbers)"): `y`/`yes`/`all` accepts every one, `n`/`no`/`none` rejects every
 * one, and numbers (`1 3`, `1,3`) pick those by their position in the list, rejecting the rest.
 * Returns null when the answer is none of these (ask again).
 */
export function parseConfirmationAnswer(answer: string, pending: PendingConfirmation[]): { accept: string[]; reject: string[] } | null {
  const text = answer.trim().toLowerCase()
  const all = pending.map((item) => item.id)
  if (['y', 'yes', 'all', 'a'].includes(text)) return { accept: all, reject: [] }
  if (['n', 'no', 'none', ''].includes(text)) return { accept: [], reject: all }
  const parts = text.split(/[\s,]+/).filter(Boolean)
  if (!parts.every((part) => /^\d+$/.test(part))) return null
  const picked = new Set<string>()
  for (const part of parts) {
    const item = pending[Number(part) - 1]
    if (!item) return null
    picked.add(item.id)
  }
  return { accept: all.filter((id) => picked.has(id)), reject: all.filter((id) => !picked.has(id)) }
}
