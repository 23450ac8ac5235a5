/**
 * Facts with values, recorded durably (issue 31, decision 0087). When a fact extracted from a
 * user's turn (decision 0066/0070) gives a subject a new value relative to an earlier recorded fact
 * of the same owner — "The user is using PostgreSQL 14 for the app." then "… switched the app from
 * PostgreSQL to MySQL", `Location: Lisbon` then `Location: Berlin` — the change is written as
 * decision 0033's knowledge pair in the owner's own `knowledge/`: the newer fact's document with
 * `supersedes` and `valid_from` (when it was said), the older fact's with `superseded_by`,
 * `valid_from` (when it was recorded, when known) and `valid_until`. Search then ranks the chain
 * newest first and marks the older "superseded by …"; `engram history` shows both.
 *
 * "Changed" is `changedValue` of text/value-readings.ts (decision 0078) on the facts' own words.
 * The earlier facts are the owner's value documents still current (a chain goes on from its live
 * end) and, before them, the owner's recorded lessons and profile facts, newest first — read
 * *before* the turn's facts were encoded, since a keyed profile value (`Location:`) replaces the
 * earlier one when it is saved. The lessons and profile facts stay as they are: they are what was
 * said (`mind.memories` lists them); the pair is the history of the value.
 *
 * Written as one unit (consolidation/unit-plan.ts, decision 0053): both documents' texts are stored
 * as a plan in the owner's tree before the first write, the new document is written before the
 * old one names it, and a process killed in between leaves the plan, which the next record of that
 * owner, the next consolidation, or the mind's first `maintain()` finishes. Under the agent's
 * consolidation lock, so no consolidation plans over a half-written pair.
 */
import type { Clock } from '../../core/clock.ts'
import type { EngramEntry } from '../../core/engram.ts'
import type { Frontmatter } from '../../core/memory-doc.ts'
import type { Owner } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import { ownerNamespace } from '../../storage/home-layout.ts'
import { changedValue, type ValueReading, valueReadings } from '../../text/value-readings.ts'
import { oneConsolidationAtATime } from '../consolidation/one-at-a-time.ts'
import { slugFor } from '../consolidation/text-facts.ts'
import { commitUnit, finishOwnerUnit, ownerDigest, type PlannedChange } from '../consolidation/unit-plan.ts'

/** The jobs-run name under which each recorded change is completed (its unit's record). */
export const VALUE_CHANGES = 'value-changes'

/** A fact recorded earlier, as it may be compared with a new one. */
export interface EarlierFact {
  text: string
  /** When it was recorded (a lesson's day), when known. */
  at?: string
}

/** A fact just recorded from a turn, and when it was said. */
export interface NewFact {
  text: string
  at: string
  method?: string
}

export interface ValueChangeRecord {
  /** The older fact's document (`users/ada/knowledge/….md`), now `superseded_by` the newer. */
  old: string
  new: string
  subject: string
  from: string
  to: string
}

export interface ValueHistoryDeps {
  backend: Backend
  agent: string
  clock: Clock
}

/** Keyed profile values (decision 0066) as the readings their sentence would give: one holder, the speaker. */
const KEYED: Record<string, { subject: string; type: string }> = {
  location: { subject: 'residence', type: 'name' },
  'works at': { subject: 'workplace', type: 'name' },
  role: { subject: 'role', type: 'role' },
  age: { subject: 'age', type: 'number' },
  'time zone': { subject: 'timezon', type: 'name' },
  timezone: { subject: 'timezon', type: 'name' },
}

/** The (subject, value) readings of a recorded fact; a keyed profile value reads as its sentence would. */
export function factReadings(text: string): ValueReading[] {
  const keyed = /^([A-Za-z][A-Za-z ]{1,20}):\s+(.+)$/.exec(text.trim())
  if (keyed) {
    const known = KEYED[(keyed[1] as string).toLowerCase()]
    if (known) return [{ subject: ['i', known.subject], type: known.type, value: (keyed[2] as string).toLowerCase().replace(/[.\s]+$/, '') }]
  }
  return valueReadings(text)
}

/** Whether a fact can change a value: a reading with a subject naming more than the speaker, or a change "from" a name (a name merely mentioned cannot). */
const canChange = (readings: readonly ValueReading[]): boolean => readings.some((reading) => reading.from !== undefined || reading.subject.some((word) => word !== 'i'))

/** A value document's frontmatter says which subject and value it holds; `value_fact` marks it as this module's. */
const isValueDoc = (fm: Frontmatter): boolean => fm.value_fact === true
const isCurrent = (fm: Frontmatter): boolean => !(typeof fm.superseded_by === 'string' && fm.superseded_by !== '')

/** A value document's body is its fact, as recorded. */
const bodyOf = (text: string): string => `${text.trim()}\n`
const factOf = (body: string): string => body.trim()

interface ValueDoc {
  slug: string
  frontmatter: Frontmatter
  body: string
}

async function valueDocs(backend: Backend, owner: Owner): Promise<{ docs: ValueDoc[]; slugs: Set<string> }> {
  const documents = backend.owned(owner).documents
  const docs: ValueDoc[] = []
  const slugs = new Set<string>()
  for (const ref of await documents.list('knowledge')) {
    slugs.add(ref.slug)
    const doc = await documents.read('knowledge', ref.slug)
    if (doc && isValueDoc(doc.frontmatter)) docs.push({ slug: ref.slug, frontmatter: doc.frontmatter, body: doc.body })
  }
  return { docs, slugs }
}

/** The owner's recorded lessons and their profile facts, newest first: what a new fact may change. */
export async function earlierFacts(backend: Backend, owner: Owner, profile: readonly EngramEntry[]): Promise<EarlierFact[]> {
  const lessons = (await backend.owned(owner).engrams('global')?.read('lessons'))?.entries ?? []
  const dated = lessons.map((entry) => ({ text: entry.text, ...(entry.ts ? { at: entry.ts } : {}) })).reverse()
  return [...dated, ...profile.map((entry) => ({ text: entry.text }))]
}

const dayInstant = (at: string | undefined): string | undefined => {
  if (at === undefined) return undefined
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(at) ? `${at}T00:00:00.000Z` : at)
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}

const subjectOf = (reading: ValueReading): string => reading.subject.filter((word) => word !== 'i').join(' ') || reading.value

/**
 * Records, for each of `facts` (in the order said) that changes a value of an earlier fact of
 * `owner`, the pair of knowledge documents (see the module comment). `earlier` is what the owner
 * had recorded before these facts were encoded (`earlierFacts`). Returns the changes recorded.
 */
export async function recordValueChanges(deps: ValueHistoryDeps, owner: Owner, facts: readonly NewFact[], earlier: readonly EarlierFact[]): Promise<ValueChangeRecord[]> {
  const candidates = facts.filter((fact) => canChange(factReadings(fact.text)))
  if (candidates.length === 0) return []
  return oneConsolidationAtATime(deps.backend, deps.agent, async () => {
    // A pair a killed process left half written is finished before anything is compared with it.
    await finishOwnerUnit(deps.backend, owner)
    const { docs, slugs } = await valueDocs(deps.backend, owner)
    const recordedTexts = new Set(docs.map((doc) => factOf(doc.body)))
    const said: EarlierFact[] = [...earlier]
    const records: ValueChangeRecord[] = []
    const namespace = ownerNamespace(owner)
    const pathOf = (slug: string): string => `${namespace}knowledge/${slug}.md`
    for (const fact of candidates) {
      const now = factReadings(fact.text)
      const current = docs.filter((doc) => isCurrent(doc.frontmatter) && factOf(doc.body) !== fact.text.trim())
      // The value's own chain first (newest first), then what was said and not yet in a chain.
      let found: { doc?: ValueDoc; text: string; at?: string; before: ValueReading; now: ValueReading } | undefined
      for (const doc of current.sort((a, b) => String(b.frontmatter.valid_from ?? '').localeCompare(String(a.frontmatter.valid_from ?? '')))) {
        const change = changedValue(factReadings(factOf(doc.body)), now)
        if (change) {
          found = { doc, text: factOf(doc.body), ...change }
          break
        }
      }
      if (!found) {
        for (const before of said) {
          if (before.text.trim() === fact.text.trim() || recordedTexts.has(before.text.trim())) continue
          const change = changedValue(factReadings(before.text), now)
          if (change) {
            found = { text: before.text, ...(before.at ? { at: before.at } : {}), ...change }
            break
          }
        }
      }
      said.unshift({ text: fact.text, at: fact.at })
      if (!found) continue
      const at = deps.clock.now().toISOString()
      const newSlug = slugFor(fact.text, slugs)
      slugs.add(newSlug)
      const value = (reading: ValueReading): Frontmatter => ({ value_fact: true, value_subject: subjectOf(reading), value_type: reading.type, value: reading.value })
      let old: ValueDoc
      if (found.doc) old = found.doc
      else {
        const slug = slugFor(found.text, slugs)
        slugs.add(slug)
        const validFrom = dayInstant(found.at)
        old = { slug, body: bodyOf(found.text), frontmatter: { created_at: at, updated_at: at, ...value(found.before), source: 'user', method: 'rules', ...(validFrom ? { valid_from: validFrom } : {}) } }
      }
      const newer: ValueDoc = {
        slug: newSlug,
        body: bodyOf(fact.text),
        frontmatter: { created_at: at, updated_at: at, ...value(found.now), source: 'user', method: fact.method ?? 'rules', valid_from: fact.at, supersedes: old.slug },
      }
      const older: ValueDoc = { ...old, frontmatter: { ...old.frontmatter, superseded_by: newSlug, valid_until: fact.at, updated_at: at } }
      const record: ValueChangeRecord = { old: pathOf(old.slug), new: pathOf(newSlug), subject: subjectOf(found.now), from: found.before.value, to: found.now.value }
      const unit = `value ${subjectOf(found.now)} ${fact.at}`
      const change = (doc: ValueDoc, reason: string): PlannedChange => ({
        kind: 'knowledge',
        slug: doc.slug,
        frontmatter: doc.frontmatter,
        body: doc.body,
        reason,
        activity: { ts: at, type: 'memory_write', content: pathOf(doc.slug), summary: `a value that changed: ${pathOf(doc.slug)} — ${reason}`, meta: { action: 'value-change', path: pathOf(doc.slug), reason, unit } },
      })
      // The newer first: a crash between the two writes never leaves `superseded_by` naming a document not written.
      await commitUnit(deps.backend, owner, {
        unit,
        at,
        changes: [change(newer, `a value that changed: supersedes ${old.slug} (${record.from} → ${record.to})`), change(older, `superseded by ${newSlug}: ${record.subject} is now ${record.to}`)],
        merged: [],
        completion: { job: VALUE_CHANGES, agent: deps.agent, startedAt: at, finishedAt: at, status: 'ok', details: { unit, owner: ownerDigest(owner), run: newSlug } },
      })
      for (const doc of [newer, older]) {
        const known = docs.findIndex((item) => item.slug === doc.slug)
        if (known >= 0) docs[known] = doc
        else docs.push(doc)
        recordedTexts.add(factOf(doc.body))
      }
      records.push(record)
    }
    return records
  })
}
