/**
 * The plain memory API (`mind.memories`, decision 0065): add, search, get, list, update, delete
 * and history of single memories by id, for hosts that manage memory themselves. A memory here is
 * one entry of declarative memory — a rule (always / never / when), a lesson or a profile fact —
 * of one owner. Nothing new underneath: `add` and `update` go through the one write path and its
 * gate (the viewer's encoder), `search` through the retriever with the caller's viewer, `delete`
 * and `history` through forgetting on request (decision 0023), so who may do what never differs
 * from the agent tools.
 *
 * Ids: `mem_` + base64url of the memory's path in the memory namespace
 * (`users/<key>/memory/rules.md#<key>`, `memory/lessons.md#<key>`, `users/<key>.md#<key>`), where
 * the entry key is the content hash the index gives the entry. Derived from what the store keeps
 * (owner, file, kind and text), so the same memory has the same id after a restart, after
 * `engram migrate`, on either backend. Opaque to hosts.
 */
import { type Confidence, CONFIDENCES, dedupeKey, type EngramEntry, type EngramKind, type EngramScope, ENGRAM_KINDS, isRuleKind, type Engram } from '../core/engram.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { canSee, type Owner, ownerOfUser, userOfOwner, type Viewer } from '../core/owner.ts'
import { type ForgetOutcome, type ForgettableMemory, memoryPathOf } from '../memory/forgetting/forget-memory.ts'
import type { DocumentHistory } from '../memory/consolidation/history.ts'
import { locateMemoryPath, memoryPathOfSource } from '../memory/tree/memory-paths.ts'
import type { ExtractionMessage, ExtractionMethod, ValueRecording } from '../memory/extraction/extract.ts'
import type { Llm } from '../llm/contracts.ts'
import type { EngramFile } from '../storage/contracts.ts'
import { forgettableOwners, resolveForgetTarget } from './forget-targets.ts'
import { forgetTarget, forgettingContextOf, historyOfTarget, purgeTarget, restoreTarget } from './forgetting.ts'
import type { ToolHost } from './tool-host.ts'

const ID_PREFIX = 'mem_'
/** The files whose entries are memories of this API, in listing order. */
const FILES: readonly EngramFile[] = ['profile', 'rules', 'lessons']
/** The index's unit kinds of each memory kind: a user's profile facts are `user` units, the agent's `profile` (indexer.ts). */
type SearchKind = 'profile' | 'user' | 'rule' | 'lesson'
const unitKindsOf = (kind: EngramKind): SearchKind[] => (isRuleKind(kind) ? ['rule'] : kind === 'profile' ? ['profile', 'user'] : ['lesson'])

/** Who a call is for: a user (their memories, plus the agent's and shared ones they see), or the agent's own view. */
export interface MemoryScope {
  /** The user the call is for; without it, the agent's own memory (and shared memory). */
  user?: string
}

/** One memory as the API returns it. */
export interface MemoryRecord {
  /** Stable, opaque id (decision 0065). */
  id: string
  text: string
  kind: EngramKind
  /** Whose memory it is: `user:<id>`, `agent` or `shared`. */
  owner: Owner
  /** Where it is kept in the memory namespace (what `read_memory_file` and `engram forget` take). */
  path: string
  /** The day it was encoded, when the store recorded it (`YYYY-MM-DD`). */
  createdAt?: string
  /** Who wrote it: `user` (memorize, this API), `consolidation` or `llm`. */
  source?: string
}

/** A search result: a memory with its score and what it stands for. */
export interface MemorySearchResult extends MemoryRecord {
  /** Higher is better; only the order matters. */
  score: number
  /** Ids of the messages or documents the memory was learned from, when recorded. */
  provenance: string[]
}

/**
 * What `add` takes: text (one memory or several, stored as given), or a conversation
 * (`{ messages }`): the facts the user states in it are extracted (decision 0066) — by the model
 * when one is configured, else by the offline rules — and stored through the same gate.
 */
export type AddMemoriesInput =
  | (MemoryScope & {
      text: string | readonly string[]
      /** What kind of memory (default `lesson`: a fact). `profile` facts read "Key: value". */
      kind?: EngramKind
      /** How sure the host is (default `high`: an explicit add is trusted, as `memorize` is); in copilot mode anything less waits for the user's yes. */
      confidence?: Confidence
    })
  | (MemoryScope & {
      /** The conversation; only the user's messages are read. */
      messages: readonly ExtractionMessage[]
    })

/** What `add` did: each memory's change; for a conversation, how its facts were found. */
export interface AddMemoriesResult {
  results: MemoryChange[]
  /** For `{ messages }`: `rules` (offline) or `model`. */
  method?: ExtractionMethod
  /** For `{ messages }`: set when the model failed and the rules' facts stand in. */
  degraded?: string
}

/** What happened to one memory given to `add` or `update`. */
export interface MemoryChange {
  /** added; unchanged (already remembered); pending (the gate holds it for the user's yes, `mind.confirm`); rejected or suppressed (memory mode off): nothing written. */
  event: 'added' | 'updated' | 'unchanged' | 'pending' | 'rejected' | 'suppressed'
  text: string
  kind: EngramKind
  owner: Owner
  /** The memory's id once it is stored (added, updated, unchanged). */
  id?: string
  /** Why it was rejected, or why the gate holds it. */
  reason?: string
  /** A pending memory's confirmation id (`mind.confirm({ accept: [id] })`). */
  confirmationId?: string
}

export interface MemoryPage {
  memories: MemoryRecord[]
  /** Pass as `offset` for the next page; absent on the last page. */
  nextOffset?: number
  total: number
}

export interface Memories {
  /** Store memories through the write path and its gate, for `user` (theirs) or the agent. */
  add(input: AddMemoriesInput): Promise<AddMemoriesResult>
  /** Memories that match `query`, best first, of those the caller sees. */
  search(query: string, options?: MemoryScope & { limit?: number; kinds?: EngramKind[] }): Promise<MemorySearchResult[]>
  /** One memory by id; `not_found` when it is not there or the caller does not see it. */
  get(id: string, options?: MemoryScope): Promise<MemoryRecord>
  /** The memories the caller sees, a page at a time, optionally of some kinds or one owner. */
  getAll(options?: MemoryScope & { kinds?: EngramKind[]; owner?: Owner; limit?: number; offset?: number }): Promise<MemoryPage>
  /** Replace a memory's text: the new text goes through the write path, the old entry is forgotten (archived, restorable). */
  update(id: string, text: string, options?: MemoryScope): Promise<MemoryChange>
  /** Forget a memory (archived, restorable with `mind.restore(path)`); `purge: true` deletes it for real. */
  delete(id: string, options?: MemoryScope & { purge?: boolean; reason?: string }): Promise<ForgetOutcome>
  /** How a memory changed (knowledge and procedure documents are versioned; entries refuse with the reason). */
  history(id: string, options?: MemoryScope): Promise<DocumentHistory>
}

/** The id of the memory at a memory path. */
export function memoryIdOf(path: string): string {
  return `${ID_PREFIX}${Buffer.from(path, 'utf8').toString('base64url')}`
}

/** Whether a string is an id of this API (not a path or a memory's text). */
export function isMemoryId(value: string): boolean {
  return value.startsWith(ID_PREFIX) && /^[A-Za-z0-9_-]+$/.test(value.slice(ID_PREFIX.length))
}

function notFound(id: string): EngramError {
  return new EngramError({
    code: ErrorCode.notFound,
    category: 'user',
    message: `No memory has the id ${id}.`,
    fix: 'use an id that add, search or getAll returned for this user',
    cliFix: 'use an id that `engram memories list` or `engram memories search` printed for this user (with the same --user, or without it for the agent\'s own)',
    details: { id },
  })
}

/** The memory path an id names; `not_found` for what is not an id of this API. */
export function pathOfMemoryId(id: string): string {
  if (typeof id !== 'string' || !isMemoryId(id)) throw notFound(String(id))
  const path = Buffer.from(id.slice(ID_PREFIX.length), 'base64url').toString('utf8')
  if (!path.includes('#') || memoryIdOf(path) !== id) throw notFound(id)
  return path
}

function fileOfKind(kind: EngramKind): EngramFile {
  return isRuleKind(kind) ? 'rules' : kind === 'lesson' ? 'lessons' : 'profile'
}

/** The forgettable memory an entry of `owner` is (a user's profile facts live in their profile). */
function entryMemory(owner: Owner, scope: EngramScope, file: EngramFile, entry: EngramEntry): ForgettableMemory {
  const user = userOfOwner(owner)
  if (file === 'profile' && user !== undefined) return { kind: 'profile-fact', owner, user, entry: { ...entry, kind: 'profile' } }
  return { kind: 'entry', owner, scope, file, entry }
}

function recordOf(memory: ForgettableMemory): MemoryRecord {
  if (memory.kind !== 'entry' && memory.kind !== 'profile-fact') throw new Error('not an entry')
  const path = memoryPathOf(memory)
  const { entry } = memory
  return {
    id: memoryIdOf(path),
    text: entry.text,
    kind: entry.kind,
    owner: memory.owner,
    path,
    ...(entry.ts ? { createdAt: entry.ts } : {}),
    ...(entry.source ? { source: entry.source } : {}),
  }
}

/** The plain memory API over an open mind. */
export function createMemories(host: ToolHost, deps: { llm?: Llm } = {}): Memories {
  const viewerOf = (user?: string): Viewer => host.scope(user).viewer

  /** Resolves an id for `viewer`: the memory it names when the viewer sees it, else `not_found`. */
  async function resolve(id: string, user: string | undefined, state: 'live' | 'any' = 'live'): Promise<ForgettableMemory> {
    const path = pathOfMemoryId(id)
    const viewer = viewerOf(user)
    let owner: Owner
    try {
      owner = locateMemoryPath(path.slice(0, path.indexOf('#')), host.layout).owner
    } catch {
      throw notFound(id)
    }
    // Another user's memory is not found rather than refused: its existence is not for this caller.
    if (!canSee(viewer, { owner, agent: owner === 'shared' ? undefined : host.agent })) throw notFound(id)
    // Read as its owner sees it, so a user's lookup of an agent memory is not redirected into their own tree.
    const ownerViewer: Viewer = { agent: host.agent, ...(userOfOwner(owner) !== undefined ? { user: userOfOwner(owner) as string } : {}) }
    try {
      const memory = await resolveForgetTarget({ layout: host.layout, backend: host.backend, viewer: ownerViewer }, path, state)
      if (memory.kind !== 'entry' && memory.kind !== 'profile-fact') throw notFound(id)
      return memory
    } catch (error) {
      if (EngramError.is(error) && error.code === ErrorCode.notFound) throw notFound(id)
      throw error
    }
  }

  /**
   * Hands `engrams` to the one write path through `user`'s gate (the agent's without one), and
   * says for each, in order, what happened. Whatever produces the engrams — text given to `add`,
   * facts extracted from a conversation — reports through here.
   */
  async function encode(engrams: Engram[], user: string | undefined): Promise<MemoryChange[]> {
    const report = await host.scope(user).encoder.encode(engrams, user === undefined ? {} : { user })
    const ownerOf = (engram: Engram): Owner => engram.owner ?? ownerOfUser(user)
    // Identity is global-only: a profile fact is filed global whatever scope it was given (encode.ts).
    const idOf = (engram: Engram, entry: EngramEntry): string => memoryIdOf(memoryPathOf(entryMemory(ownerOf(engram), engram.kind === 'profile' ? 'global' : engram.scope, fileOfKind(engram.kind), entry)))
    const same = (a: Engram, b: Engram): boolean => a === b || (a.text === b.text && a.kind === b.kind)
    return engrams.map((engram): MemoryChange => {
      const base = { text: engram.text, kind: engram.kind, owner: ownerOf(engram) }
      const saved = report.saved.find((item) => same(item.engram, engram))
      if (saved) return { ...base, event: 'added', text: saved.entry.text, id: idOf(engram, saved.entry) }
      if (report.duplicates.some((item) => same(item, engram))) return { ...base, event: 'unchanged', id: idOf(engram, { text: engram.text, kind: engram.kind, meta: {} }) }
      const pending = report.pending.find((item) => same(item.engram, engram))
      if (pending) return { ...base, event: 'pending', reason: pending.reason, confirmationId: pending.id }
      const rejected = report.rejected.find((item) => same(item.engram, engram))
      if (rejected) return { ...base, event: 'rejected', reason: rejected.reason }
      return { ...base, event: 'suppressed', reason: 'memory mode is off' }
    })
  }

  /** Memories a host wrote itself: trusted as `memorize` is (source user), global, of `owner`. */
  const engramsOf = (texts: readonly string[], kind: EngramKind, owner: Owner, confidence: Confidence = 'high'): Engram[] =>
    texts.map((text) => ({ text, kind, scope: 'global', confidence, source: 'user', owner }))

  /**
   * A user's profile fact merges by its key ("City: Paris" → "City: Rome" takes the old line's
   * place), which would leave nothing of the old value to restore. So the old fact is forgotten
   * first (archived, restorable), then the new one is written through the gate; when the gate does
   * not take it, the old fact is put back and nothing has changed.
   */
  async function updateProfileFact(old: MemoryRecord, text: string, user: string | undefined): Promise<MemoryChange> {
    if (dedupeKey(text) === dedupeKey(old.text)) return { event: 'unchanged', text: old.text, kind: old.kind, owner: old.owner, id: old.id }
    const context = forgettingContextOf(host, user)
    await forgetTarget(context, old.path, { reason: 'updated: replaced by a new value' })
    const [change] = (await encode(engramsOf([text], old.kind, old.owner), user)) as [MemoryChange]
    if (change.event !== 'added' && change.event !== 'unchanged') {
      await restoreTarget(context, old.path)
      return change
    }
    return { ...change, event: 'updated' }
  }

  return {
    async add(input) {
      if (input && 'messages' in input) {
        if (!Array.isArray(input.messages) || input.messages.some((message) => typeof message !== 'object' || message === null || typeof message.role !== 'string' || typeof message.content !== 'string')) {
          throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'add({ messages }) takes a list of { role, content } with text content.', fix: 'pass { messages: [{ role: "user", content: "…" }, …], user?: "<id>" }' })
        }
        // Loaded when facts are first extracted, not when a mind opens (decision 0082).
        const { extractFacts, factsBefore, recordChangedValues } = await import('../memory/extraction/extract.ts')
        const extraction = await extractFacts(input.messages, deps.llm ? { llm: deps.llm } : {})
        const owner = ownerOfUser(input.user)
        const user = input.user
        // A saved fact that gives a subject a new value supersedes the earlier one (decision 0087).
        const values: ValueRecording = { backend: host.backend, agent: host.agent, clock: host.clock, owner, profile: async () => (user === undefined ? [] : host.memory.profiles.facts(user)) }
        const earlier = extraction.engrams.length > 0 ? await factsBefore(values) : []
        const results = await encode(extraction.engrams.map((engram) => ({ ...engram, owner: engram.owner ?? owner })), input.user)
        // A duplicate counts too: a call repeated after a crash finds its facts saved, and the change not yet recorded.
        const saved = results.filter((change) => change.event === 'added' || change.event === 'unchanged').map((change) => ({ text: change.text, kind: change.kind, method: extraction.method }))
        if (saved.length > 0) await recordChangedValues(values, input.messages, saved, earlier)
        return { results, method: extraction.method, ...(extraction.degraded !== undefined ? { degraded: extraction.degraded } : {}) }
      }
      if (!input || !('text' in input)) {
        throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'add takes { text } (one memory or a list) or { messages } (a conversation).', fix: 'pass { text: "…", user?: "<id>", kind?: "lesson" } or { messages: [{ role: "user", content: "…" }], user?: "<id>" }' })
      }
      const texts = (typeof input.text === 'string' ? [input.text] : [...input.text]).map((text) => (typeof text === 'string' ? text.trim() : ''))
      if (texts.length === 0 || texts.some((text) => text === '')) {
        throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'A memory to add is empty.', fix: 'pass each memory as non-empty text' })
      }
      const kind = input.kind ?? 'lesson'
      if (!(ENGRAM_KINDS as readonly string[]).includes(kind)) {
        throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `${JSON.stringify(kind)} is not a kind of memory.`, fix: `use one of ${ENGRAM_KINDS.join(', ')}` })
      }
      const confidence = input.confidence ?? 'high'
      if (!(CONFIDENCES as readonly string[]).includes(confidence)) {
        throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `${JSON.stringify(confidence)} is not a confidence.`, fix: `use one of ${CONFIDENCES.join(', ')}` })
      }
      return { results: await encode(engramsOf(texts, kind, ownerOfUser(input.user), confidence), input.user) }
    },

    async search(query, options = {}) {
      const viewer = viewerOf(options.user)
      await host.indexed()
      const kinds = [...new Set((options.kinds?.length ? options.kinds : ENGRAM_KINDS).flatMap(unitKindsOf))]
      const limit = options.limit ?? 10
      const found = await host.retriever.search(query, { viewer, kinds, limit: limit * 2 })
      const results: MemorySearchResult[] = []
      for (const hit of found.hits) {
        const hash = hit.unit.id.lastIndexOf('#')
        if (hash < 0 || !canSee(viewer, hit.unit)) continue
        const key = hit.unit.id.slice(hash + 1)
        const file = memoryPathOfSource(hit.unit.source, host.layout)
        if (file === undefined) continue
        const record = await resolve(memoryIdOf(`${file}#${key}`), options.user).then(recordOf, () => undefined)
        if (!record || (options.kinds?.length && !options.kinds.includes(record.kind))) continue
        results.push({ ...record, score: hit.score, provenance: hit.provenance })
        if (results.length >= limit) break
      }
      return results
    },

    async get(id, options = {}) {
      return recordOf(await resolve(id, options.user))
    },

    async getAll(options = {}) {
      const viewer = viewerOf(options.user)
      const owners = (options.owner ? [options.owner] : ([ownerOfUser(viewer.user), 'agent', 'shared'] as Owner[])).filter((owner, index, all) => all.indexOf(owner) === index)
      const all: MemoryRecord[] = []
      for (const owner of owners) {
        if (!canSee(viewer, { owner, agent: owner === 'shared' ? undefined : host.agent })) continue
        const user = userOfOwner(owner)
        for (const file of FILES) {
          if (file === 'profile' && owner === 'shared') continue
          const entries = file === 'profile' && user !== undefined ? await host.memory.profiles.facts(user) : ((await host.backend.owned(owner).engrams('global')?.read(file))?.entries ?? [])
          for (const entry of entries) {
            if (options.kinds?.length && !options.kinds.includes(entry.kind)) continue
            all.push(recordOf(entryMemory(owner, 'global', file, entry)))
          }
        }
      }
      const offset = Math.max(0, Math.floor(options.offset ?? 0))
      const limit = Math.max(1, Math.floor(options.limit ?? 100))
      const memories = all.slice(offset, offset + limit)
      return { memories, total: all.length, ...(offset + limit < all.length ? { nextOffset: offset + limit } : {}) }
    },

    async update(id, text, options = {}) {
      const memory = await resolve(id, options.user)
      const old = recordOf(memory)
      const user = options.user
      const context = forgettingContextOf(host, user)
      // What a caller sees but may not change (the agent's memory seen by a user) is refused as forgetting refuses it, before anything is written.
      if (!forgettableOwners(context.viewer).includes(memory.owner)) await forgetTarget(context, old.path)
      if (memory.kind === 'profile-fact') return updateProfileFact(old, text, user)
      const [change] = (await encode(engramsOf([text], old.kind, memory.owner), user)) as [MemoryChange]
      if ((change.event !== 'added' && change.event !== 'unchanged') || change.id === id) return change
      // The old text is forgotten (archived, restorable): that is its history. A profile fact
      // replaced by its key ("City: Paris" → "City: Rome") is already gone from the profile.
      await forgetTarget(context, old.path, { reason: `updated to ${change.id}` }).catch((error: unknown) => {
        if (!EngramError.is(error) || error.code !== ErrorCode.notFound) throw error
      })
      return { ...change, event: 'updated' }
    },

    async delete(id, options = {}) {
      const memory = await resolve(id, options.user, options.purge ? 'any' : 'live')
      const context = forgettingContextOf(host, options.user)
      const path = memoryPathOf(memory)
      return (options.purge ? purgeTarget : forgetTarget)(context, path, options.reason ? { reason: options.reason } : {})
    },

    async history(id, options = {}) {
      const memory = await resolve(id, options.user, 'any')
      return historyOfTarget(forgettingContextOf(host, options.user), memoryPathOf(memory))
    },
  }
}
