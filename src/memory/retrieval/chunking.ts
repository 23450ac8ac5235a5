/**
 * Splitting documents into retrievable units. A unit should hold one idea a recall can point at:
 * a section of a knowledge file, an entry of an episode log, not a whole file whose one relevant
 * line drowns in the rest.
 */

import { parseEpisodeSections, recalledSection } from '../episodes/episode-format.ts'

/** Target size of a chunk; small enough that one chunk is one idea, big enough to carry context. */
export const CHUNK_TOKENS = 300

// Chunk sizes need not be exact, and chunking runs over every file when a home opens: a
// characters-per-token estimate keeps the tokenizer (≈200 ms to load) off that path.
const approxTokens = (text: string): number => Math.ceil(text.length / 4)

export interface Chunk {
  /** 0-based order in the document. */
  index: number
  /** The nearest heading above the chunk, carried so a chunk stands on its own. */
  heading: string | undefined
  text: string
  /** Why the text is degraded (an episode section summarised without an LLM), when it is. */
  degraded?: string
}

/**
 * Split markdown at headings, then at blank lines when a section is too long. Headings are kept
 * with their section; a lone over-long paragraph stays whole rather than being cut mid-sentence.
 */
export function chunkMarkdown(body: string, maxTokens = CHUNK_TOKENS): Chunk[] {
  const sections: Array<{ heading: string | undefined; lines: string[] }> = []
  let current: { heading: string | undefined; lines: string[] } = { heading: undefined, lines: [] }
  for (const line of body.split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)
    if (heading) {
      if (current.lines.some((l) => l.trim() !== '')) sections.push(current)
      current = { heading: heading[1]?.trim(), lines: [line] }
    } else {
      current.lines.push(line)
    }
  }
  if (current.lines.some((l) => l.trim() !== '')) sections.push(current)

  const chunks: Chunk[] = []
  for (const section of sections) {
    // A heading with nothing under it (a file's title line) is not a memory of its own.
    if (!section.lines.some((line) => line.trim() !== '' && !/^#{1,6}\s/.test(line))) continue
    const text = section.lines.join('\n').trim()
    if (approxTokens(text) <= maxTokens) {
      chunks.push({ index: chunks.length, heading: section.heading, text })
      continue
    }
    let buffer: string[] = []
    let size = 0
    for (const paragraph of text.split(/\n\s*\n/)) {
      const n = approxTokens(paragraph)
      if (size > 0 && size + n > maxTokens) {
        chunks.push({ index: chunks.length, heading: section.heading, text: buffer.join('\n\n') })
        buffer = []
        size = 0
      }
      buffer.push(paragraph)
      size += n
    }
    if (buffer.length > 0) chunks.push({ index: chunks.length, heading: section.heading, text: buffer.join('\n\n') })
  }
  return chunks
}

/**
 * An episode file's chunks: each `## ` section chunked on its own, as it is recalled — without the
 * machine's marker comment (JSON for immediate encoding, not a memory) and without the extractive
 * notice, which becomes the chunk's `degraded` reason instead (episode-format.ts `recalledSection`).
 */
export function chunkEpisode(body: string, maxTokens = CHUNK_TOKENS): Chunk[] {
  const chunks: Chunk[] = []
  for (const section of parseEpisodeSections(body)) {
    const { heading, body: text, degraded } = recalledSection(section)
    for (const chunk of chunkMarkdown(text, maxTokens)) {
      // Each chunk opens with its section's time and title as plain words (a `## ` would be escaped
      // in a prompt), so a chunk read alone still says when and what.
      chunks.push({
        index: chunks.length,
        heading: heading === '' ? chunk.heading : heading,
        text: heading === '' ? chunk.text : `${heading}\n${chunk.text}`,
        ...(degraded !== undefined ? { degraded } : {}),
      })
    }
  }
  return chunks
}
