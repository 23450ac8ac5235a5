/**
 * Episode compression (the seed's weekly "episodes/ compression"; decision 0034): an episode day
 * file older than a threshold keeps, in each section, what a later reader needs to find and trust
 * it — its heading, its first sentence or two, its "Resolved:" and "New tasks:" lists and its
 * marker comment — and drops the rest. Extractive: every word kept is the file's own, no model is
 * involved. The file is rewritten through the one write path (`documents.write`), which first
 * saves the full file under `archive/versions/episode/`, so nothing is lost; the frontmatter says
 * it was compressed (`compressed: true`, `compression: extractive`, `compressed_at`).
 *
 * The marker comments stay byte for byte: immediate encoding reads them to repair a crash between
 * writing a section and recording its cursor (immediate-encoding.ts `unfinishedSections`), so a
 * compressed section is still recognised as recorded and never appended again.
 *
 * What is left alone: a file whose frontmatter cannot be read (it would be rewritten as plain
 * text), a file already compressed, and one that would not shrink. A second run changes nothing.
 * The search index still holds the full sections until the next reindex; the caller reindexes.
 */
import type { ActivityEvent } from '../../core/activity.ts'
import { type Clock, isoDay } from '../../core/clock.ts'
import { describeError } from '../../core/errors.ts'
import { type Owner, ownerOfUser } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import { type HomeLayout, ownerNamespace, ownerTree } from '../../storage/home-layout.ts'
import { parseEpisodeSections } from '../episodes/episode-format.ts'
import { episodeDayLock } from '../episodes/immediate-encoding.ts'

/** Episodes older than this many days are compressed (the seed's weekly run; recall looks back 30 days by default). */
export const EPISODE_COMPRESSION_DAYS = 30
/** At most this many sentences of a section's text are kept. */
const LEAD_SENTENCES = 2
/** …and at most this many characters of them: two sentences of an LLM summary, or the extractive note and the first request. */
const LEAD_MAX_CHARS = 320
/** Said once in a section that lost text, so a reader knows where the rest is. Recognised on a later run, never counted as a sentence. */
export const COMPRESSION_NOTE = '_(compressed: the full text is in archive/versions/episode/)_'

export interface EpisodeCompressionDeps {
  backend: Backend
  layout: HomeLayout
  clock: Clock
}

export interface EpisodeCompressionOptions {
  /** Compress day files older than this many days (default 30). */
  olderThanDays?: number
  /** Say what would be compressed, write nothing. */
  dryRun?: boolean
  /**
   * The start of a killed run this one goes on with: a compression whose record that run appended
   * is finished at the record's instant, not compressed (and recorded) a second time.
   */
  resumedSince?: string
}

export interface EpisodeCompressionRun {
  /** Each file compressed (a dry run: that would be), by memory path (`users/ada/episodes/2026-03-02.md`), with its body's UTF-8 size before and after. */
  compressed: Array<{ path: string; before: number; after: number }>
  /** Old files left alone for a reason a person may want to fix (frontmatter that cannot be read, a write that failed). */
  skipped: Array<{ path: string; reason: string }>
}

/** Whether `event` is the record of an episode's compression (see `compressEpisodes`). */
const isCompressionRecord = (event: ActivityEvent): boolean =>
  event.type === 'memory_write' && event.meta?.action === 'consolidate' && event.meta.period === 'weekly' && typeof event.meta.reason === 'string' && event.meta.reason.startsWith('compressed ')

/** A unit of kept text: a sentence of a paragraph, or one list item. */
interface Unit {
  text: string
  item: boolean
  paragraph: number
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+\S/
const KEPT_LIST = /^(?:Resolved|New tasks):\s*$/
const COMMENT = /^\s*<!--.*-->\s*$/
// After a sentence's closing mark (and any closing bracket, quote or emphasis): where the next begins.
const SENTENCE_END = /(?<=[.!?…。！？][)\]"'’”_*]*)\s+(?=\S)/u

function sentencesOf(text: string): string[] {
  return text
    .split(SENTENCE_END)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '')
}

/** Cuts `text` to at most `max` characters at a word boundary, marking the cut. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text
  const head = text.slice(0, max - 1)
  const space = head.lastIndexOf(' ')
  return `${(space > max / 2 ? head.slice(0, space) : head).trimEnd()}…`
}

/** The first sentences (or list items) of some prose lines, within the bounds, as markdown. */
function leadOf(lines: string[]): { text: string; dropped: boolean } {
  const units: Unit[] = []
  let paragraph = 0
  let run: string[] = []
  const flush = (): void => {
    for (const sentence of sentencesOf(run.join(' '))) units.push({ text: sentence, item: false, paragraph })
    run = []
  }
  for (const line of lines) {
    if (line.trim() === '') {
      flush()
      paragraph++
    } else if (LIST_ITEM.test(line)) {
      flush()
      units.push({ text: line.trim(), item: true, paragraph })
    } else {
      run.push(line.trim())
    }
  }
  flush()

  const kept: Unit[] = []
  let size = 0
  for (const unit of units) {
    if (kept.length >= LEAD_SENTENCES) break
    if (kept.length === 0) {
      kept.push({ ...unit, text: cut(unit.text, LEAD_MAX_CHARS) })
      size = kept[0]?.text.length ?? 0
      continue
    }
    if (size + 1 + unit.text.length > LEAD_MAX_CHARS) break
    kept.push(unit)
    size += 1 + unit.text.length
  }
  let text = ''
  kept.forEach((unit, index) => {
    const previous = kept[index - 1]
    if (previous) text += previous.paragraph !== unit.paragraph ? '\n\n' : previous.item || unit.item ? '\n' : ' '
    text += unit.text
  })
  const dropped = kept.length < units.length || kept.some((unit, index) => unit.text !== units[index]?.text)
  return { text, dropped }
}

/** One section (its lines without the heading) compressed: the lead, the kept lists, the comments. */
function compressSectionLines(lines: string[]): { parts: string[]; dropped: boolean } {
  const prose: string[] = []
  const lists: string[] = []
  const comments: string[] = []
  let noted = false
  let inList = false
  for (const line of lines) {
    if (COMMENT.test(line)) {
      comments.push(line)
      inList = false
    } else if (KEPT_LIST.test(line.trim())) {
      lists.push(line.trim())
      inList = true
    } else if (inList && LIST_ITEM.test(line)) {
      lists[lists.length - 1] += `\n${line}`
    } else if (line.trim() === COMPRESSION_NOTE) {
      noted = true
      inList = false
    } else if (/^#{1,6}\s/.test(line)) {
      // A sub-heading is not a sentence; the file's `# <date>` title is kept by the caller.
      inList = false
    } else {
      prose.push(line)
      inList = false
    }
  }
  const lead = leadOf(prose)
  const parts = [lead.text, ...(lead.dropped || noted ? [COMPRESSION_NOTE] : []), ...lists, ...comments].filter((part) => part !== '')
  return { parts, dropped: lead.dropped }
}

/**
 * An episode body compressed: each `## ` section keeps its heading, its first sentence or two
 * (at most 320 characters), its "Resolved:" and "New tasks:" lists and its comments (the episode
 * marker) verbatim; text before the first section keeps its `# ` title and its lead. Pure; a
 * compressed body compresses to itself. Also says whether any section lost text (a file where
 * none did is left alone).
 */
export function compressEpisodeText(body: string): { body: string; dropped: boolean } {
  const lines = body.split('\n')
  const sections = parseEpisodeSections(body)
  const out: string[] = []
  let dropped = false
  sections.forEach((section, index) => {
    const own = lines.slice(section.line - 1, (sections[index + 1]?.line ?? lines.length + 1) - 1)
    const title = (line: string): boolean => section.heading === '' && /^#\s/.test(line)
    // The heading line of a section, or the file's `# <date>` title before the first one.
    const head = section.heading === '' ? own.filter(title) : own.slice(0, 1)
    const compressed = compressSectionLines(section.heading === '' ? own.filter((line) => !title(line)) : own.slice(1))
    const text = [...head, ...compressed.parts].join('\n\n')
    const original = own.join('\n').trim()
    // A short section would only gain the note: it stays whole (and so on every later run).
    if (compressed.dropped && text.length < original.length) {
      dropped = true
      out.push(text)
    } else if (original !== '') {
      out.push(original)
    }
  })
  return { body: `${out.join('\n\n')}\n`, dropped }
}

/**
 * Compresses every owner's episode files older than `olderThanDays` (default 30): the agent's,
 * the shared tree's and each user's. Idempotent; a dry run writes nothing.
 */
export async function compressEpisodes(deps: EpisodeCompressionDeps, options: EpisodeCompressionOptions = {}): Promise<EpisodeCompressionRun> {
  const olderThanDays = options.olderThanDays ?? EPISODE_COMPRESSION_DAYS
  const before = isoDay(new Date(deps.clock.now().getTime() - olderThanDays * 86_400_000))
  const run: EpisodeCompressionRun = { compressed: [], skipped: [] }
  const owners: Owner[] = ['agent', 'shared', ...(await deps.backend.users()).map((user) => ownerOfUser(user))]
  for (const owner of owners) {
    const documents = deps.backend.owned(owner).documents
    const old = (await documents.slugs('episode')).filter((slug) => slug < before).map((slug) => ({ slug, path: `${ownerTree(deps.layout, owner).rel}/episodes/${slug}.md` }))
    if (old.length === 0) continue
    const unreadable = new Set((await documents.problems(['episode'])).map((problem) => problem.file))
    const activity = deps.backend.owned(owner).activity
    // What a killed run recorded of its compressions (each record is appended before its write).
    const begun = options.resumedSince === undefined || options.dryRun ? [] : (await activity.read({ since: options.resumedSince, types: ['memory_write'] })).filter(isCompressionRecord)
    for (const ref of old) {
      const path = `${ownerNamespace(owner)}episodes/${ref.slug}.md`
      if (unreadable.has(ref.path)) {
        run.skipped.push({ path, reason: 'its frontmatter cannot be read; left as it is (engram doctor shows why)' })
        continue
      }
      try {
        const outcome = await deps.backend.locks.withLock(episodeDayLock(deps.layout.agent, owner, ref.slug), async () => {
          // Read inside the lock that immediate encoding appends under: no section is lost.
          const doc = await documents.read('episode', ref.slug)
          if (!doc || doc.frontmatter.compressed === true) return undefined
          const { body, dropped } = compressEpisodeText(doc.body)
          const sizes = { path, before: Buffer.byteLength(doc.body), after: Buffer.byteLength(body) }
          // Nothing cut (only blank lines would go) or nothing saved: the file stays as it is.
          if (!dropped || sizes.after >= sizes.before) return undefined
          if (!options.dryRun) {
            // Recorded in the owner's own log, as the weekly run's other changes are (the dashboard
            // lists a run's changes from there) — before the write, so that a crash between the two
            // leaves the record for the resumed run to finish at its instant, never a compressed
            // file without its record (decision 0085).
            const earlier = begun.find((record) => record.content === path)
            const at = earlier?.ts ?? deps.clock.now().toISOString()
            if (!earlier) {
              const reason = `compressed ${sizes.before} → ${sizes.after} bytes; the full text stays in archive/versions/`
              await activity.append({ ts: at, type: 'memory_write', content: path, summary: `${reason} — ${path}`, meta: { action: 'consolidate', period: 'weekly', path, reason } })
            }
            const frontmatter = { ...doc.frontmatter, compressed: true, compression: 'extractive', compressed_at: at }
            // At the record's instant: a write a crash cut after saving the version reuses that version.
            await documents.write('episode', ref.slug, frontmatter, body, { reason: `episode compression: older than ${olderThanDays} days, each section cut to its heading, first sentences, lists and marker`, at })
          }
          return sizes
        })
        if (outcome.kind !== 'done') run.skipped.push({ path, reason: 'its day is locked by another process; the next run compresses it' })
        else if (outcome.value) run.compressed.push(outcome.value)
      } catch (error) {
        run.skipped.push({ path, reason: `not compressed: ${describeError(error)}` })
      }
    }
  }
  return run
}
