/**
 * Keeps the search index in step with the files a person can edit. Files are the truth; the index
 * is derived. On open and on `engram reindex`, every memory file is read, cut into units, and each
 * unit's content hash compared with the index: changed units are re-embedded and replaced, units of
 * deleted files or removed lines are dropped, unchanged ones cost nothing but the hash.
 */
import type { Clock } from '../../core/clock.ts'
import { dedupeKey, type EngramEntry, type EngramScope, isRuleKind, ruleWithPolarity } from '../../core/engram.ts'
import { describeError, messageOf } from '../../core/errors.ts'
import { contentHash } from '../../core/hash.ts'
import { entryInstant } from '../../core/markdown-entry.ts'
import type { DocKind, MemoryDoc } from '../../core/memory-doc.ts'
import { memoryKinds } from '../../core/memory-kinds.ts'
import { type Owner, ownerOfUser, userFromKey, userKey, userOfOwner } from '../../core/owner.ts'
import { type ProgressOptions, startPhase } from '../../core/progress.ts'
import type { Backend, EngramFile, EngramStore, IndexUnit, ParseProblem, UnitKind } from '../../storage/contracts.ts'
import { ENGRAM_FILES } from '../../storage/contracts.ts'
import type { Embedder } from '../../llm/contracts.ts'
import type { SkillStore } from '../skills/skill-store.ts'
import { profileFacts } from '../engrams/user-profiles.ts'
import { chunkEpisode, chunkMarkdown } from './chunking.ts'
import { factValidityOf } from './fact-history.ts'

export interface ReindexReport {
  /** Sources (files) looked at. */
  sources: number
  added: number
  updated: number
  removed: number
  unchanged: number
  /**
   * Lines and files that could not be read — unparsable lines, special files, links leading out of
   * their memory folder, files over `memory.maxFileBytes` (decision 0025). They were skipped and
   * kept as they are.
   */
  problems: ParseProblem[]
  /** Set when units were indexed without vectors because the embedder failed. */
  embedError?: string
  ms: number
}

export interface IndexerDeps {
  backend: Backend
  embedder: Embedder | null
  clock: Clock
  agent: string
  /** Skills are folders (meta.json + declarative.md), not documents; indexed when given. */
  skills?: SkillStore
}

/**
 * Documents of these kinds are indexed from every owner's tree, in registry order (memory-kinds.ts;
 * state and prompt layers are read whole, not recalled; profiles have their own pass below).
 */
const INDEXED_DOC_KINDS: ReadonlyArray<{ kind: DocKind; unit: UnitKind }> = memoryKinds().flatMap(([kind, spec]) =>
  spec.home === 'tree' && spec.unit !== null ? [{ kind, unit: spec.unit as UnitKind }] : [],
)

/**
 * The kinds whose unreadable files a reindex reports: all but the gathered ones (threads, decision
 * 0080). A thread is rebuilt from the turns and read only by a question that gathers; checking each
 * on every reindex read every thread at every session boundary. `engram status` still reports them.
 */
const PROBLEM_DOC_KINDS: readonly DocKind[] = memoryKinds().flatMap(([kind, spec]) => (spec.primedBy === 'gathered' ? [] : [kind]))

const FILE_UNIT: Record<EngramFile, UnitKind> = { profile: 'profile', rules: 'rule', lessons: 'lesson' }

/** The home-relative folder of an owner's tree (home-layout.ts `ownerTree().rel`). */
function treeRel(owner: Owner, agent: string): string {
  const user = userOfOwner(owner)
  return owner === 'shared' ? 'shared' : user === undefined ? `agents/${agent}` : `agents/${agent}/users/${userKey(user)}`
}

/**
 * The source label of an engram file: a path relative to the home, or `project:` for the project
 * scope (a user's project memory under `project:.engram/users/<key>/memory/`).
 */
export function engramSource(scope: EngramScope, agent: string, file: string, owner: Owner = 'agent'): string {
  const user = userOfOwner(owner)
  if (scope === 'global') return `${treeRel(owner, agent)}/memory/${file}`
  return user === undefined ? `project:.engram/memory/${file}` : `project:.engram/users/${userKey(user)}/memory/${file}`
}

/**
 * A piece of collection that failed in a way no store foresaw: reported as a problem of `file`, so
 * that one file never stops the reindex of the others (DESIGN §1 principle 10). `wanted` keeps no
 * entry for it, so its units leave the index until it can be read again.
 */
async function guarded(report: Collected, file: string, work: () => Promise<void>): Promise<void> {
  try {
    await work()
  } catch (error) {
    report.problems.push({ file, line: 0, text: '', reason: `cannot be read: ${describeError(error)}` })
  }
}

/**
 * The documents this process indexed, per index: each source with the hash of the file its units
 * came from and how many there were. A reindex skips a document whose file still has that hash and
 * whose units the index still holds (a forgotten and restored file is indexed again), so that the
 * reindex after each `maintain()` does not read and chunk a year of unchanged episodes again.
 */
const indexedDocuments = new WeakMap<object, Map<string, { hash: string; units: number }>>()

/**
 * What one piece of the collection found: its units by source and its problems. The pieces read
 * their files at once (a fresh process spends most of a reindex waiting on small reads); what they
 * found is merged in a fixed order, the order of a collection run piece after piece.
 */
interface Collected {
  wanted: Map<string, IndexUnit[]>
  problems: ParseProblem[]
}
type Piece = (found: Collected) => Promise<void>

/** Files read at once by one piece of the collection. */
const READS_AT_ONCE = 8

/** Runs the pieces at once and merges what each found, in their order, into `wanted` and `report`. */
async function collectAll(pieces: Piece[], wanted: Map<string, IndexUnit[]>, report: ReindexReport): Promise<void> {
  const found = pieces.map((): Collected => ({ wanted: new Map(), problems: [] }))
  await Promise.all(pieces.map((piece, i) => piece(found[i] as Collected)))
  for (const part of found) {
    for (const [source, units] of part.wanted) wanted.set(source, units)
    report.problems.push(...part.problems)
  }
}

/**
 * `work` of each item, at most `limit` at once; the outcomes in the items' order, a failure as
 * `{ error }`.
 */
async function settledInOrder<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>, memo?: Pick<DocumentMemo, 'tick' | 'signal'>): Promise<Array<{ value: R } | { error: unknown }>> {
  const outcomes: Array<{ value: R } | { error: unknown }> = new Array(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      // Stopped (Ctrl-C): the reindex throws before it writes anything (see reindexFiles).
      memo?.signal?.throwIfAborted()
      const i = next++
      try {
        outcomes[i] = { value: await work(items[i] as T) }
      } catch (error) {
        outcomes[i] = { error }
      }
      memo?.tick()
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return outcomes
}

/** `promise` as an outcome, so that it can be awaited later without an unhandled rejection meanwhile. */
function settle<R>(promise: Promise<R>): Promise<{ value: R } | { error: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
}

/** The values of `settledInOrder` up to the first failure, which is then thrown (as a loop that stopped there would have). */
function* untilFailure<R>(outcomes: Array<{ value: R } | { error: unknown }>): Generator<R> {
  for (const outcome of outcomes) {
    if ('error' in outcome) throw outcome.error
    yield outcome.value
  }
}

/** What the collection of documents knows of earlier reindexes (see `indexedDocuments`). */
interface DocumentMemo {
  known: Map<string, { hash: string; units: number }>
  /** Sources the index holds now. */
  live: ReadonlySet<string>
  /** Documents skipped as unchanged this time. */
  unchanged: Set<string>
  /** Documents read this time, with their file's hash. */
  read: Map<string, string>
  /** Counts a file read, for progress. */
  tick: () => void
  signal: AbortSignal | undefined
}

/**
 * Bring the index up to date with every memory file. Never throws for what a file holds. With
 * `signal` aborted it stops between batches of units (what was written stays, with its hash: the
 * next reindex writes only the rest) and throws the signal's reason.
 */
export async function reindexFiles(deps: IndexerDeps, options: { full?: boolean } & ProgressOptions = {}): Promise<ReindexReport> {
  const started = performance.now()
  const reading = startPhase(options, 'reading files')
  const report: ReindexReport = { sources: 0, added: 0, updated: 0, removed: 0, unchanged: 0, problems: [], ms: 0 }
  const wanted = new Map<string, IndexUnit[]>()
  // Every owner's tree (decision 0017): the agent's, the shared one, and each user's of this agent.
  const owners: Owner[] = ['agent', 'shared', ...(await deps.backend.users()).map((user) => ownerOfUser(user))]
  const known = indexedDocuments.get(deps.backend.index) ?? new Map<string, { hash: string; units: number }>()
  const memo: DocumentMemo = { known: options.full ? new Map() : known, live: new Set(await deps.backend.index.sources()), unchanged: new Set(), read: new Map(), tick: () => reading.step(), signal: options.signal }

  const pieces = owners.flatMap((owner) => ownerPieces(owner, deps, memo))

  // A user's profile belongs to that user and to every agent of the home (decision 0017).
  pieces.push((found) =>
    guarded(found, 'shared/users', async () => {
      const refs = await deps.backend.documents.list('user')
      const docs = await settledInOrder(refs, READS_AT_ONCE, (ref) => deps.backend.documents.read('user', ref.slug), memo)
      let i = 0
      for (const doc of untilFailure(docs)) {
        const ref = refs[i++] as (typeof refs)[number]
        const user = userFromKey(ref.slug)
        if (user === undefined) {
          // Nobody's profile: kept as it is, never read into anyone's memory, and said (decision 0025).
          found.problems.push({ file: `shared/users/${ref.slug}.md`, line: 0, text: '', reason: 'a profile file whose name is no user id (engram names them after the user id, percent-encoded); not read — rename it to <user id>.md' })
          continue
        }
        if (!doc) continue
        found.wanted.set(doc.path, profileUnits(doc, ref.modifiedAt).map((u) => ({ ...u, user, owner: ownerOfUser(user) })))
      }
    }),
  )

  if (deps.skills) {
    const skills = deps.skills
    pieces.push((found) => guarded(found, `agents/${deps.agent}/skills`, () => collectSkillUnits(deps, skills, found)))
  }
  await collectAll(pieces, wanted, report)
  // Nothing is written yet: stopping here leaves the index as it was (a read stopped by the signal
  // was taken for a problem of its file above: thrown away with the rest).
  await reading.checkpoint()

  await writeUnits(deps, wanted, report, options, memo.unchanged)
  for (const source of memo.unchanged) {
    report.sources++
    report.unchanged += known.get(source)?.units ?? 0
  }
  // Remember what was indexed now (not when vectors failed: their units are written again next time).
  const next = new Map<string, { hash: string; units: number }>()
  for (const source of memo.unchanged) {
    const entry = known.get(source)
    if (entry) next.set(source, entry)
  }
  if (report.embedError === undefined) for (const [source, hash] of memo.read) next.set(source, { hash, units: wanted.get(source)?.length ?? 0 })
  indexedDocuments.set(deps.backend.index, next)
  report.ms = Math.round(performance.now() - started)
  return report
}

async function collectSkillUnits(deps: IndexerDeps, skills: SkillStore, found: Collected): Promise<void> {
  const listing = await skills.list()
  for (const skill of listing.skills) {
    const source = `agents/${deps.agent}/skills/${skill.label}/declarative.md`
    const text = [`${skill.meta.name}: ${skill.meta.when_to_use}`, skill.meta.description ?? '', skill.declarative.slice(0, 1500)].filter((part) => part.trim() !== '').join('\n')
    found.wanted.set(source, [
      {
        id: `${source}#0`,
        kind: 'skill',
        text,
        source,
        provenance: [source],
        agent: deps.agent,
        createdAt: Number.isNaN(Date.parse(skill.meta.created_at)) ? deps.clock.now().toISOString() : new Date(skill.meta.created_at).toISOString(),
        hash: contentHash(text),
        meta: { label: skill.label },
      },
    ])
  }
  for (const problem of listing.problems) {
    found.problems.push({ file: `agents/${deps.agent}/skills/${problem.label}`, line: 0, text: '', reason: problem.reason })
  }
}

/** Upserts what changed and removes what is gone. */
async function writeUnits(deps: IndexerDeps, wanted: Map<string, IndexUnit[]>, report: ReindexReport, options: { full?: boolean } & ProgressOptions, unchanged: ReadonlySet<string>): Promise<void> {
  const index = deps.backend.index
  const fileSources = new Set([...wanted.keys(), ...unchanged])
  // Sources that no longer exist (a deleted or archived file) leave the index entirely; another
  // agent's files in the same home are that agent's to reindex.
  for (const source of await index.sources()) {
    if (!fileSources.has(source) && isFileSource(source, deps.agent)) report.removed += await index.removeSource(source)
  }

  const toWrite: IndexUnit[] = []
  for (const [source, units] of wanted) {
    report.sources++
    const known = options.full ? new Map<string, string>() : await index.hashes(source)
    const seen = new Set<string>()
    for (const unit of units) {
      if (seen.has(unit.id)) continue // the same line twice in a file: one unit
      seen.add(unit.id)
      const hash = known.get(unit.id)
      if (hash === unit.hash) {
        report.unchanged++
        continue
      }
      if (hash === undefined) report.added++
      else report.updated++
      toWrite.push(unit)
    }
    const stale = [...known.keys()].filter((id) => !seen.has(id))
    if (stale.length > 0) {
      await index.remove(stale)
      report.removed += stale.length
    }
  }

  // Every unit written is embedded (not spread into another array: 180,000 lessons overflowed the
  // stack) — unless the index keeps no vectors (PostgreSQL without pgvector): then the units go in
  // by their words, findable, instead of being refused one by one for their vector (decision 0055).
  const toEmbed = deps.embedder && index.capabilities.vectors !== false ? toWrite : []
  if (toEmbed.length > 0 && deps.embedder) {
    const embedding = startPhase(options, 'embedding units', toEmbed.length)
    try {
      const batch = 256
      for (let i = 0; i < toEmbed.length; i += batch) {
        await embedding.checkpoint()
        const slice = toEmbed.slice(i, i + batch)
        const vectors = await deps.embedder.embed(slice.map((u) => u.text), 'document')
        slice.forEach((unit, j) => {
          unit.vector = vectors[j]
        })
        embedding.step(slice.length)
      }
    } catch (error) {
      // Stopped (Ctrl-C), not failed: nothing of this reindex is written yet.
      if (options.signal?.aborted) throw error
      // Vectors are an enhancement: the text still goes into the index and stays findable by
      // words. The failure is reported, and the next reindex retries (hashes stay blank).
      report.embedError = messageOf(error)
      for (const unit of toEmbed) {
        unit.vector = undefined
        unit.hash = ''
      }
    }
  }
  const writing = startPhase(options, 'writing units', toWrite.length)
  for (let i = 0; i < toWrite.length; i += 500) {
    // Between batches: each unit written carries its hash, so the next reindex writes only the rest.
    await writing.checkpoint()
    const batch = toWrite.slice(i, i + 500)
    try {
      await index.upsert(batch)
    } catch {
      // A unit the index refuses must not keep the rest of its batch out: one by one, and the
      // refused ones are reported against their file.
      for (const unit of batch) {
        try {
          await index.upsert([unit])
        } catch (error) {
          report.problems.push({ file: unit.source, line: 0, text: '', reason: `not indexed: ${describeError(error)}` })
        }
      }
    }
    writing.step(batch.length)
  }
}

/** The pieces that collect the units of one owner's tree: its engram files and topics (per scope), each kind of document, its problems. */
function ownerPieces(owner: Owner, deps: IndexerDeps, memo: DocumentMemo): Piece[] {
  const stores = deps.backend.owned(owner)
  const unitAgent = owner === 'shared' ? undefined : deps.agent
  const pieces: Piece[] = []
  for (const scope of ['global', 'project'] as const) {
    const store = stores.engrams(scope)
    if (!store) continue
    pieces.push(async (found) => {
      // Reading the topic files for their problems starts now, beside the engram files.
      const topicProblems = settle(store.topicProblems())
      let lessons: EngramEntry[] | undefined
      for (const file of ENGRAM_FILES) {
        const source = engramSource(scope, deps.agent, `${file}.md`, owner)
        await guarded(found, source, async () => {
          const { entries, problems } = await store.read(file)
          if (file === 'lessons') lessons = entries
          // Reported by the file's source label (home-relative), as every other problem is.
          found.problems.push(...problems.map((problem) => ({ ...problem, file: source })))
          found.wanted.set(source, entries.map((entry) => ({ ...engramUnit(entry, scope, file, source, deps), agent: unitAgent, owner })))
        })
      }
      await guarded(found, engramSource(scope, deps.agent, 'topics', owner), () => collectTopicUnits(owner, scope, store, topicProblems, lessons, deps, found))
    })
  }

  for (const { kind, unit } of INDEXED_DOC_KINDS) {
    pieces.push((found) =>
      guarded(found, `${treeRel(owner, deps.agent)}/${kind}`, async () => {
        const refs = (await stores.documents.list(kind)).filter((ref) => {
          if (memo.known.get(ref.path)?.hash !== ref.hash || !memo.live.has(ref.path)) return true
          memo.unchanged.add(ref.path)
          return false
        })
        const docs = await settledInOrder(refs, READS_AT_ONCE, (ref) => stores.documents.read(kind, ref.slug), memo)
        let i = 0
        for (const doc of untilFailure(docs)) {
          const ref = refs[i++] as (typeof refs)[number]
          if (!doc) continue
          if (doc.hash === ref.hash) memo.read.set(doc.path, doc.hash)
          found.wanted.set(doc.path, docUnits(doc, unit, ref.modifiedAt, deps).map((u) => ({ ...u, agent: unitAgent, owner })))
        }
      }),
    )
  }
  pieces.push((found) =>
    guarded(found, treeRel(owner, deps.agent), async () => {
      found.problems.push(...(await stores.documents.problems(PROBLEM_DOC_KINDS)))
    }),
  )
  return pieces
}

/** The units of one scope's topic files. */
async function collectTopicUnits(
  owner: Owner,
  scope: EngramScope,
  store: EngramStore,
  /** `store.topicProblems()`, under way. */
  topicProblems: Promise<{ value: ParseProblem[] } | { error: unknown }>,
  /** The scope's lessons as just read for their own units (read again here if that failed). */
  lessons: EngramEntry[] | undefined,
  deps: IndexerDeps,
  found: Collected,
): Promise<void> {
  const unitAgent = owner === 'shared' ? undefined : deps.agent
  const listed = await topicProblems
  if ('error' in listed) throw listed.error
  for (const problem of listed.value) {
    const name = problem.file.slice(problem.file.lastIndexOf('/') + 1)
    found.problems.push({ ...problem, file: engramSource(scope, deps.agent, `topics/${name}`, owner) })
  }
  // Topic files hold copies of lessons (cross-filed) plus whatever a person wrote there. The
  // copies are already units of lessons.md; only the rest is indexed, without metadata comments.
  const lessonKeys = new Set((lessons ?? (await store.read('lessons')).entries).map((entry) => dedupeKey(entry.text)))
  const slugs = await store.listTopics()
  const texts = await settledInOrder(slugs, READS_AT_ONCE, (slug) => store.recallTopic(slug))
  let i = 0
  for (const markdown of untilFailure(texts)) {
    const slug = slugs[i++] as string
    if (markdown === null) continue
    const source = engramSource(scope, deps.agent, `topics/${slug}.md`, owner)
    const own = markdown
      .split('\n')
      .filter((line) => {
        const entry = /^\s*-\s+(.*?)\s*(<!--.*-->)?\s*$/.exec(line)
        return !(entry && lessonKeys.has(dedupeKey(entry[1] ?? '')))
      })
      .join('\n')
      .replace(/\s*<!--[\s\S]*?-->/g, '')
    const chunks = chunkMarkdown(own).filter((chunk) => chunk.text.split('\n').some((line) => line.trim() !== '' && !/^#{1,6}\s/.test(line)))
    found.wanted.set(source, chunks.map((chunk) => ({
      id: `${source}#${chunk.index}`,
      kind: 'topic' as const,
      text: chunk.text,
      source,
      provenance: [source],
      scope,
      agent: unitAgent,
      owner,
      createdAt: deps.clock.now().toISOString(),
      hash: contentHash(chunk.text),
      meta: { topic: slug },
    })))
  }
}

/** Sources this agent's file indexer owns (conversation units are kept by the context store's path). */
function isFileSource(source: string, agent: string): boolean {
  return source.startsWith(`agents/${agent}/`) || source.startsWith('shared/') || source.startsWith('project:')
}

/** The key of an entry's unit (`<source>#<key>`): its kind and text, so the same memory keeps its id. */
export function engramEntryKey(entry: Pick<EngramEntry, 'kind' | 'text'>): string {
  return contentHash(`${entry.kind}\n${entry.text}`).slice(0, 16)
}

function engramUnit(entry: EngramEntry, scope: EngramScope, file: EngramFile, source: string, deps: IndexerDeps): IndexUnit {
  const key = engramEntryKey(entry)
  // A rule's unit says its polarity ("Never: Use time.sleep() …"): priming and search_memory show
  // unit text as it is, and a never-rule shown bare reads as its opposite. The embedding then also
  // tells an always-rule from the never-rule of the same words. (The hash covers the shown text,
  // so units indexed bare before are rewritten by the next reindex.)
  const text = isRuleKind(entry.kind) ? ruleWithPolarity(entry.kind, entry.text) : entry.text
  return {
    id: `${source}#${key}`,
    kind: FILE_UNIT[file],
    text,
    source,
    provenance: [source],
    scope,
    agent: deps.agent,
    createdAt: (entry.ts === undefined ? undefined : entryInstant(entry.ts)) ?? deps.clock.now().toISOString(),
    hash: contentHash(`${entry.kind}\n${text}\n${entry.ts ?? ''}`),
    meta: { engramKind: entry.kind, ...(entry.topic ? { topic: entry.topic } : {}), ...(entry.tool ? { tool: entry.tool } : {}) },
  }
}

/**
 * A user's profile, one unit per fact (`<path>#<key>`, the key a profile entry of memory/profile.md
 * would have): search shows the fact that matched, and its id names that fact to `forget` (decision 0046).
 */
function profileUnits(doc: MemoryDoc, modifiedAt: string): IndexUnit[] {
  const createdAt = typeof doc.frontmatter.created_at === 'string' && !Number.isNaN(Date.parse(doc.frontmatter.created_at)) ? new Date(doc.frontmatter.created_at).toISOString() : modifiedAt
  return profileFacts(doc.body).map((fact) => {
    const links = [...fact.text.matchAll(/\[\[([^\]\n]{1,200})\]\]/g)].map((m) => (m[1] as string).trim())
    return {
      id: `${doc.path}#${engramEntryKey(fact)}`,
      kind: 'user' as const,
      text: fact.text,
      source: doc.path,
      provenance: [doc.path],
      createdAt,
      updatedAt: modifiedAt,
      hash: contentHash(fact.text),
      links: links.length > 0 ? links : undefined,
      meta: { slug: doc.slug, engramKind: 'profile' },
    }
  })
}

function docUnits(doc: MemoryDoc, unit: UnitKind, modifiedAt: string, deps: IndexerDeps): IndexUnit[] {
  const fm = doc.frontmatter
  // An episode file is named by its day: that day, not the file's modification time, is when it happened.
  const day = unit === 'episode' && /^\d{4}-\d{2}-\d{2}$/.test(doc.slug) ? `${doc.slug}T00:00:00.000Z` : undefined
  const createdAt = typeof fm.created_at === 'string' && !Number.isNaN(Date.parse(fm.created_at)) ? new Date(fm.created_at).toISOString() : (day ?? modifiedAt)
  const description = typeof fm.description === 'string' ? fm.description : undefined
  const links = [...doc.body.matchAll(/\[\[([^\]\n]{1,200})\]\]/g)].map((m) => (m[1] as string).trim())
  // A knowledge document's place in a history of facts (decision 0033) goes on every unit, and into
  // its hash: a document superseded after it was indexed is rewritten by the next reindex. A
  // document without these fields keeps the hash of its text alone.
  const validity = unit === 'knowledge' ? factValidityOf(fm) : undefined
  const historyKey = validity === undefined ? '' : `\n\u0000history ${validity.supersededBy ?? ''} ${validity.supersedes ?? ''} ${validity.validFrom ?? ''} ${validity.validUntil ?? ''}`
  const chunks = unit === 'episode' ? chunkEpisode(doc.body) : chunkMarkdown(doc.body)
  return chunks.map((chunk) => {
    const text = chunk.index === 0 && description ? `${description}\n${chunk.text}` : chunk.text
    return {
      id: `${doc.path}#${chunk.index}`,
      kind: unit,
      text,
      source: doc.path,
      provenance: [doc.path],
      agent: deps.agent,
      createdAt,
      updatedAt: modifiedAt,
      hash: contentHash(`${text}${historyKey}${chunk.degraded ? `\n\u0000degraded ${chunk.degraded}` : ''}`),
      links: links.length > 0 ? links : undefined,
      meta: { slug: doc.slug, ...(chunk.heading ? { heading: chunk.heading } : {}), ...(chunk.degraded ? { degraded: chunk.degraded } : {}), ...validity },
    }
  })
}
