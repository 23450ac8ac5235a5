/**
 * A long message is indexed as passages that point back to it (DESIGN §5 "Retrieval", decision
 * 0026): the message is stored whole in the context store, and the search index holds one unit
 * per passage of at most PASSAGE_CHARS characters (`msg:<id>#p<k>`, provenance = the message id),
 * so a search or priming finds the part of a pasted document or log that matches and the agent
 * can open the whole. Conversational turns are far shorter (LoCoMo's longest: 454 characters) and
 * stay one unit each, as before.
 */

/** Messages longer than this are indexed as passages of at most this many characters. */
export const PASSAGE_CHARS = 2_000

export interface Passage {
  /** 1-based. */
  index: number
  /** Offsets in the message text: [from, to). */
  from: number
  to: number
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/**
 * Where `text` is cut into passages of at most `size` characters: at the last paragraph break in
 * the second half of each window, else the last line break or sentence end, else the last space,
 * else anywhere (never inside a surrogate pair). Linear in the text. A text of at most `size`
 * characters is one passage.
 */
export function passageBounds(text: string, size: number = PASSAGE_CHARS): Passage[] {
  const out: Passage[] = []
  let from = 0
  while (from < text.length) {
    let to = Math.min(text.length, from + size)
    if (to < text.length) {
      const window = text.slice(from, to)
      const floor = Math.floor(size / 2)
      const paragraph = window.lastIndexOf('\n\n')
      const line = window.lastIndexOf('\n')
      const sentence = Math.max(window.lastIndexOf('. '), window.lastIndexOf('! '), window.lastIndexOf('? '))
      const space = window.lastIndexOf(' ')
      const cut = [paragraph >= floor ? paragraph + 2 : -1, Math.max(line >= floor ? line + 1 : -1, sentence >= floor ? sentence + 2 : -1), space >= floor ? space + 1 : -1].find((at) => at > 0)
      if (cut !== undefined) to = from + cut
      else if (isHighSurrogate(text.charCodeAt(to - 1))) to--
    }
    out.push({ index: out.length + 1, from, to })
    from = to
  }
  return out
}

/** Whether a message of this text is indexed as passages rather than as one unit. */
export function isLong(text: string): boolean {
  return text.length > PASSAGE_CHARS
}

/** `msg:12#p3` → { messageId: 12, passage: 3 }; `msg:12` or `12` → { messageId: 12 }; else undefined. */
export function parseMessageRef(id: string): { messageId: number; passage?: number } | undefined {
  const match = /^(?:msg:)?(\d+)(?:#p(\d+))?$/.exec(id.trim())
  if (!match) return undefined
  return match[2] === undefined ? { messageId: Number(match[1]) } : { messageId: Number(match[1]), passage: Number(match[2]) }
}
