/**
 * The daily episode file, `episodes/<YYYY-MM-DD>.md` (AnimaWorks' daily log): a `# <date>` title
 * and one section per encoded stretch of a session:
 *
 * ```markdown
 * ## 14:30 — Fixed the staging deploy
 *
 * The user reported that the deploy failed; the agent found the expired token and renewed it.
 *
 * Resolved:
 * - staging deploy fails
 *
 * New tasks:
 * - rotate the token every 90 days
 *
 * <!-- episode {"session":"chat-42","turns":[1,3],"from":"activity/…#L1","until":"activity/…#L9","method":"llm"} -->
 * ```
 *
 * The closing comment says where the section came from; immediate encoding reads it back to stay
 * idempotent, and the daily consolidation to find its sources. Hand-written sections without it
 * are ordinary sections.
 */

export type EpisodeMethod = 'llm' | 'extractive'

/** Metadata closing an encoded section. */
export interface EpisodeMarker {
  session: string
  /** First and last turn covered. */
  turns: [number, number]
  /** Refs of the first and last activity event covered. */
  from: string
  until: string
  /** Time of the last event covered (where the next boundary continues). */
  untilTs: string
  method: EpisodeMethod
  /** When the section was written (ISO). */
  recorded: string
  /** What the summary said was resolved and newly to do (kept so a re-run can finish the job). */
  resolved?: string[]
  tasks?: string[]
  /** Why the LLM summary was not used, when `method` is `extractive`. */
  fallback?: string
}

/** One `## ` section of an episode file. */
export interface EpisodeSection {
  /** The heading text without `## ` (`14:30 — Fixed the staging deploy`), or '' before any heading. */
  heading: string
  /** Text under the heading (without the marker comment). */
  body: string
  marker: EpisodeMarker | undefined
  /** 1-based line of the heading in the body. */
  line: number
}

const MARKER = /<!-- episode (\{.*\}) -->/
// The line an extractive section opens with (a compressed section may keep it as its first sentence).
const EXTRACTIVE_NOTICE = /^\s*_Extractive summary \(no LLM summary: .*?\)\._\s*/

/** The first line of an extractive section's body: said in the file, where a person reads it. */
export function extractiveNotice(fallback: string): string {
  return `_Extractive summary (no LLM summary: ${fallback})._`
}

/**
 * A section as it is recalled (indexed, primed, found by search): its heading, and its body without the
 * marker comment and without the extractive notice, and why it is degraded, when it is. The notice
 * belongs in the file; in a prompt it is said once for all the memories it concerns (provenance),
 * not repeated on every one.
 */
export function recalledSection(section: EpisodeSection): { heading: string; body: string; degraded: string | undefined } {
  const lines = section.body.split('\n')
  const noticed = lines.some((line) => EXTRACTIVE_NOTICE.test(line))
  const body = lines
    .map((line) => line.replace(EXTRACTIVE_NOTICE, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
  const extractive = noticed || section.marker?.method === 'extractive'
  const degraded = extractive ? `extractive summary (no LLM summary${section.marker?.fallback ? `: ${section.marker.fallback}` : ''})` : undefined
  return { heading: section.heading, body, degraded }
}

/** The first line of a new day file. */
export function episodeFileTitle(day: string): string {
  return `# ${day}\n`
}

/** Serialises a marker as a one-line comment; `-->` inside values cannot close it early. */
export function formatMarker(marker: EpisodeMarker): string {
  const json = JSON.stringify(marker).replace(/-->/g, '--\\u003e').replace(/</g, '\\u003c')
  return `<!-- episode ${json} -->`
}

/** Reads a marker comment from a line, or undefined when there is none or it does not parse. */
export function parseMarker(line: string): EpisodeMarker | undefined {
  const match = MARKER.exec(line)
  if (!match?.[1]) return undefined
  try {
    const value = JSON.parse(match[1]) as Partial<EpisodeMarker>
    if (typeof value.session !== 'string' || typeof value.until !== 'string' || typeof value.untilTs !== 'string' || !Array.isArray(value.turns)) return undefined
    return value as EpisodeMarker
  } catch {
    return undefined
  }
}

/** A section's heading text, on one line and of a readable length. */
export function headingTitle(title: string): string {
  const flat = title.replace(/\s+/g, ' ').replace(/^#+\s*/, '').trim()
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat || 'Session'
}

/** The markdown of one section, starting with a blank line so it never glues onto the last one. */
export function formatEpisodeSection(options: { time: string; title: string; body: string; resolved: string[]; tasks: string[]; marker: EpisodeMarker }): string {
  const parts = [`\n## ${options.time} — ${headingTitle(options.title)}`, options.body.trim()]
  if (options.resolved.length > 0) parts.push(`Resolved:\n${options.resolved.map((item) => `- ${oneLine(item)}`).join('\n')}`)
  if (options.tasks.length > 0) parts.push(`New tasks:\n${options.tasks.map((item) => `- ${oneLine(item)}`).join('\n')}`)
  parts.push(formatMarker(options.marker))
  return `${parts.join('\n\n')}\n`
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/** Splits an episode body into its `## ` sections (text before the first heading is section ''). */
export function parseEpisodeSections(body: string): EpisodeSection[] {
  const sections: EpisodeSection[] = []
  let current: { heading: string; lines: string[]; line: number } = { heading: '', lines: [], line: 1 }
  const flush = (): void => {
    const markerLine = current.lines.find((line) => MARKER.test(line))
    const text = current.lines.filter((line) => !MARKER.test(line)).join('\n').trim()
    if (current.heading !== '' || text !== '') sections.push({ heading: current.heading, body: text, marker: markerLine ? parseMarker(markerLine) : undefined, line: current.line })
  }
  body.split('\n').forEach((line, index) => {
    const heading = /^##\s+(.*\S)\s*$/.exec(line)
    if (heading?.[1] && !line.startsWith('###')) {
      flush()
      current = { heading: heading[1], lines: [], line: index + 1 }
    } else {
      current.lines.push(line)
    }
  })
  flush()
  return sections
}
