/**
 * `encode()`: the one write path of declarative memory (Anton's Cortex.encode). Every producer
 * hands Engrams to it; it checks each one, applies the encoding gate (the memory mode), and routes
 * it to the store of its scope: rules into their section of rules.md, lessons into lessons.md
 * (cross-filed into topics/), profile facts merged by key into profile.md.
 *
 * The gate (Anton's Locus Coeruleus): `autopilot` saves everything, `copilot` saves high
 * confidence and queues the rest for the user's answer, `off` saves nothing (memory is still read).
 */
import { type Clock, isoDay } from '../../core/clock.ts'
import {
  CONFIDENCES,
  type Engram,
  type EngramEntry,
  ENGRAM_KINDS,
  ENGRAM_SCOPES,
  ENGRAM_SOURCES,
  RULE_KINDS,
} from '../../core/engram.ts'
import { isAbsolute, relative, sep } from 'node:path'
import { describeError, EngramError, ErrorCode } from '../../core/errors.ts'
import type { MemoryMode } from '../../config/schema.ts'
import type { ActivityLog, EngramStore, Locks } from '../../storage/contracts.ts'
import type { ConfirmationQueue, ConfirmationSelection, PendingMemory } from '../../storage/contracts.ts'
import { isOwner, type Owner, ownerOfUser, userOfOwner, type Viewer } from '../../core/owner.ts'
import type { EncodeContext, EncodeReport, Encoder, PendingConfirmation } from './encoder.ts'
import { mergeProfileFact } from './profile-facts.ts'
import type { UserProfiles } from './user-profiles.ts'

export interface SavedEngram {
  engram: Engram
  entry: EngramEntry
  /** Where it went: the store's location and the file. */
  location: string
  file: 'rules' | 'lessons' | 'profile'
  /** The home-relative path of the file, when the store knows it (a user's profile: `shared/users/<key>.md`). */
  path?: string
  /** Whose memory it became. */
  owner: Owner
}

/** The engram stores of one owner. */
export interface OwnerEngramStores {
  global: EngramStore
  project?: EngramStore
}

export interface EncoderDeps {
  /** The agent's own global store. */
  global: EngramStore
  /** The project's store; without it, project-scope engrams are rejected with the reason. */
  project?: EngramStore
  /**
   * The stores of any owner (decision 0017). Without it only agent-owned engrams can be saved;
   * a user's or shared engram is rejected with the reason.
   */
  storesOf?: (owner: Owner) => OwnerEngramStores
  /** Where a user's profile facts go (the one profile); without it they are rejected. */
  profiles?: UserProfiles
  /** The activity log a save is recorded in, per owner (default `activity` for every owner). */
  activityOf?: (owner: Owner) => ActivityLog
  mode: MemoryMode
  confirmations: ConfirmationQueue
  clock: Clock
  /** The home: a file store's location is a folder in it, and the activity log names the file relative to it. */
  home?: string
  /** Receives one `memory_write` event per save; a failing log never fails the encode. */
  activity?: ActivityLog
  /** Serializes profile merges across processes (read, merge, rewrite). Recommended. */
  locks?: Locks
  /** Called after each save (to index it); a throwing callback never fails the encode. */
  onSaved?: (saved: SavedEngram) => void | Promise<void>
  /** Called when a side effect (activity log, onSaved) failed. */
  onError?: (error: unknown) => void
}

export interface ConfirmReport {
  /** The confirmations that were answered yes, and what saving them did. */
  accepted: PendingConfirmation[]
  report: EncodeReport
  rejected: PendingConfirmation[]
}

/**
 * An engram that already has a history (an import): its encoding day and extra metadata are kept
 * instead of stamping today's date.
 */
export type DatedEngram = Engram & {
  ts?: string
  meta?: Record<string, string>
  /** Write exactly the metadata in `meta` (an imported line keeps its comment as it was). */
  verbatimMeta?: boolean
}

/** The encoder plus what the gate's confirmations need. */
export interface EngramEncoder extends Encoder {
  readonly mode: MemoryMode
  /** Encode with the gate bypassed: the user already said yes (accepted confirmation, import). */
  encodeConfirmed(engrams: DatedEngram[], context?: EncodeContext): Promise<EncodeReport>
  /** What waits for `user`'s answer (the agent's own queue without one); a read, shown after an answer. */
  pendingConfirmations(user?: string): Promise<PendingConfirmation[]>
  /** Save the selected confirmations of `user` (gate bypassed), then mark them accepted. */
  acceptConfirmations(selection: ConfirmationSelection, user?: string): Promise<ConfirmReport>
  /** Drop the selected confirmations of `user` (nothing is saved; the decision is recorded). */
  rejectConfirmations(selection: ConfirmationSelection, user?: string): Promise<ConfirmReport>
}

function emptyReport(): EncodeReport {
  return { saved: [], duplicates: [], pending: [], suppressed: [], rejected: [] }
}

/** Why an engram cannot be stored as it is, or undefined when it can. */
export function invalidEngramReason(engram: Engram, hasProject: boolean): string | undefined {
  if (engram === null || typeof engram !== 'object') return 'not an engram object'
  if (typeof engram.text !== 'string' || engram.text.trim().length === 0) return 'the text is empty'
  if (!(ENGRAM_KINDS as readonly string[]).includes(engram.kind)) return `kind "${String(engram.kind)}" is not one of ${ENGRAM_KINDS.join(', ')}`
  if (!(ENGRAM_SCOPES as readonly string[]).includes(engram.scope)) return `scope "${String(engram.scope)}" is not global or project`
  if (!(CONFIDENCES as readonly string[]).includes(engram.confidence)) return `confidence "${String(engram.confidence)}" is not high, medium or low`
  if (!(ENGRAM_SOURCES as readonly string[]).includes(engram.source)) return `source "${String(engram.source)}" is not user, consolidation or llm`
  if (engram.scope === 'project' && engram.kind !== 'profile' && !hasProject) {
    return 'project scope, but no project is open (pass --project or set ENGRAM_PROJECT, or use scope global)'
  }
  if (engram.owner !== undefined && !isOwner(engram.owner)) return `owner ${JSON.stringify(engram.owner)} is not agent, shared or user:<id>`
  if (engram.owner === 'shared' && engram.kind === 'profile') return 'a profile fact is about one user or the agent, never shared: use owner user or agent'
  return undefined
}

/** The entry an engram becomes in its file. Lessons carry their topic; anything may carry a tool. */
export function entryOfEngram(engram: DatedEngram, day: string): EngramEntry {
  if (engram.verbatimMeta) {
    const meta = { ...(engram.meta ?? {}) }
    const entry: EngramEntry = { text: engram.text.trim(), kind: engram.kind, meta }
    if (meta.confidence) entry.confidence = engram.confidence
    if (meta.source) entry.source = engram.source
    if (meta.ts) entry.ts = meta.ts
    // A lesson's topic is kept even when only its file said it (a topic file's entries).
    const topic = meta.topic ?? (engram.kind === 'lesson' ? engram.topic?.trim() : undefined)
    if (topic) entry.topic = topic
    if (meta.tool) entry.tool = meta.tool
    return entry
  }
  // The seed's profile.md is a plain snapshot ("- Name: Jorge"), without metadata.
  if (engram.kind === 'profile') return { text: engram.text.trim(), kind: 'profile', meta: {} }
  const entry: EngramEntry = {
    text: engram.text.trim(),
    kind: engram.kind,
    confidence: engram.confidence,
    source: engram.source,
    ts: typeof engram.ts === 'string' && /^\d{4}-\d{2}-\d{2}/.test(engram.ts) ? engram.ts : day,
    meta: { ...(engram.meta ?? {}) },
  }
  if (engram.kind === 'lesson' && engram.topic?.trim()) entry.topic = engram.topic.trim()
  if (engram.tool?.trim()) entry.tool = engram.tool.trim()
  return entry
}

/** Creates the encoder of one mind: the gate, the routing and the confirmations. */
export function createEncoder(deps: EncoderDeps): EngramEncoder {
  const { global, project, mode, confirmations, clock } = deps

  function storesFor(owner: Owner): OwnerEngramStores {
    if (owner === 'agent') return { global, ...(project ? { project } : {}) }
    if (!deps.storesOf) throw new Error(`this encoder saves only agent-owned memory; ${owner} has no store here`)
    return deps.storesOf(owner)
  }

  function report(error: unknown): void {
    try {
      deps.onError?.(error)
    } catch {
      // The error sink itself failed; there is nowhere left to report to, and encoding must go on.
    }
  }

  /** The saved file as the activity log names it: home-relative when it is in the home (a row's label otherwise). */
  function loggedFile(saved: SavedEngram): string {
    if (saved.path !== undefined) return saved.path
    const file = `${saved.location}/${saved.file}.md`
    if (deps.home === undefined || !isAbsolute(file)) return file
    const inHome = relative(deps.home, file)
    return inHome.startsWith('..') || isAbsolute(inHome) ? file : inHome.split(sep).join('/')
  }

  /** `method` (how an extracted fact was found: rules or model, decision 0066) is logged with the save: a profile fact's line keeps no metadata. */
  async function afterSave(saved: SavedEngram, context: EncodeContext, method?: string): Promise<void> {
    // Recorded in the activity of the session that saved it (a user's promotion is their act).
    const log = deps.activityOf ? deps.activityOf(context.user !== undefined ? ownerOfUser(context.user) : saved.owner) : deps.activity
    if (log) {
      try {
        const { engram } = saved
        await log.append({
          ts: clock.now().toISOString(),
          type: 'memory_write',
          content: engram.text,
          summary: `${engram.kind} -> ${engram.scope} ${saved.file}`,
          meta: {
            kind: engram.kind,
            scope: engram.scope,
            confidence: engram.confidence,
            source: engram.source,
            file: loggedFile(saved),
            owner: saved.owner,
            ...(engram.topic ? { topic: engram.topic } : {}),
            ...(engram.tool ? { tool: engram.tool } : {}),
            ...(method ? { method } : {}),
          },
        })
      } catch (error) {
        report(error)
      }
    }
    if (deps.onSaved) {
      try {
        await deps.onSaved(saved)
      } catch (error) {
        report(error)
      }
    }
  }

  async function mergeIntoProfile(global: EngramStore, entry: EngramEntry): Promise<{ kind: 'added'; entry: EngramEntry } | { kind: 'duplicate'; existing: EngramEntry }> {
    const merge = async () => {
      const current = await global.recallIdentity()
      const merged = mergeProfileFact(current, entry)
      if (merged.kind === 'duplicate') return { kind: 'duplicate' as const, existing: merged.existing }
      await global.rewriteIdentity(merged.entries)
      return { kind: 'added' as const, entry: merged.entry }
    }
    if (!deps.locks) return merge()
    const outcome = await deps.locks.withLock(`engrams-identity:${global.location}`, merge)
    if (outcome.kind === 'done') return outcome.value
    throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: 'The profile is being rewritten by another process.', fix: 'Try again in a moment.' })
  }

  async function store(engram: DatedEngram, result: EncodeReport, context: EncodeContext): Promise<void> {
    const entry = entryOfEngram(engram, isoDay(clock.now()))
    const owner = engram.owner ?? 'agent'
    const user = userOfOwner(owner)
    if (engram.kind === 'profile' && user !== undefined) {
      // A user's profile is one document shared by the agents of the home (decision 0017).
      if (!deps.profiles) throw new Error('this encoder has no user profiles to write to')
      const merged = await deps.profiles.mergeFact(user, entry.text)
      if (merged.kind === 'duplicate') {
        result.duplicates.push(engram)
        return
      }
      result.saved.push({ engram, entry })
      await afterSave({ engram, entry, location: merged.path.replace(/\/[^/]*$/, ''), file: 'profile', path: merged.path, owner }, context, engram.meta?.method)
      return
    }
    const stores = storesFor(owner)
    // Identity is singular (Anton: profile.md is global-only), so profile facts always go global.
    const target = engram.kind === 'profile' || engram.scope === 'global' ? stores.global : stores.project
    if (!target) {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `no ${engram.scope} store for ${owner}`, fix: 'open a project (--project or ENGRAM_PROJECT), or use scope global' })
    }
    let outcome: { kind: 'added'; entry: EngramEntry } | { kind: 'duplicate'; existing: EngramEntry }
    let file: SavedEngram['file']
    if (engram.kind === 'profile') {
      outcome = await mergeIntoProfile(stores.global, entry)
      file = 'profile'
    } else if ((RULE_KINDS as readonly string[]).includes(engram.kind)) {
      outcome = await target.encodeRule(entry)
      file = 'rules'
    } else {
      outcome = await target.encodeLesson(entry)
      file = 'lessons'
    }
    if (outcome.kind === 'duplicate') {
      result.duplicates.push(engram)
      return
    }
    const saved: SavedEngram = { engram, entry: outcome.entry, location: target.location, file, owner }
    result.saved.push({ engram, entry: outcome.entry })
    await afterSave(saved, context, engram.meta?.method)
  }

  async function run(engrams: DatedEngram[], gated: boolean, context: EncodeContext = {}): Promise<EncodeReport> {
    const result = emptyReport()
    if (!Array.isArray(engrams)) {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'encode() takes an array of engrams.', fix: 'Pass [engram, …].' })
    }
    for (const engram of engrams) {
      const reason = invalidEngramReason(engram, project !== undefined)
      if (reason) {
        result.rejected.push({ engram, reason })
        continue
      }
      if (gated && mode === 'off') {
        result.suppressed.push(engram)
        continue
      }
      if (gated && mode === 'copilot' && engram.confidence !== 'high') {
        result.pending.push(await confirmations.enqueue(engram, `copilot mode: confidence ${engram.confidence}`, context.user))
        continue
      }
      // A memory a user's session hands to the agent or to everyone waits for a yes in copilot mode.
      const promoted = context.user !== undefined && (engram.owner ?? 'agent') !== ownerOfUser(context.user)
      if (gated && mode === 'copilot' && promoted) {
        result.pending.push(await confirmations.enqueue(engram, `copilot mode: promotion to ${engram.owner ?? 'agent'}`, context.user))
        continue
      }
      try {
        await store(engram, result, context)
      } catch (error) {
        // One engram that cannot be written (a lock timeout, a full disk) must not lose the others.
        result.rejected.push({ engram, reason: describeError(error) })
      }
    }
    return result
  }

  /** The pending confirmations a selection names; an id that is not pending is an error. */
  async function selected(selection: ConfirmationSelection, user: string | undefined): Promise<PendingConfirmation[]> {
    const pending = await confirmations.pending(user)
    if (selection === 'all') return pending
    const ids = selection.map((id) => String(id).trim())
    const unknown = ids.filter((id) => !pending.some((item) => item.id === id))
    if (unknown.length > 0) {
      throw new EngramError({
        code: ErrorCode.notFound,
        category: 'user',
        message: `No pending confirmation has the id ${unknown.join(', ')}.`,
        fix: 'Run `engram confirm` to list the pending ones and their ids.',
        details: { unknown, pending: pending.map((item) => item.id) },
      })
    }
    return pending.filter((item) => ids.includes(item.id))
  }

  async function accept(selection: ConfirmationSelection, user: string | undefined): Promise<ConfirmReport> {
    // Memory files waiting (promotions of write_memory_file) are the mind's to write: `mind.confirm`.
    const chosen = (await selected(selection, user)).filter((item): item is PendingMemory => item.engram !== undefined)
    const encoded = await run(
      chosen.map((item) => item.engram),
      false,
      user === undefined ? {} : { user },
    )
    // Only what was written (or already there) is marked accepted; a failed write stays pending.
    const failed = new Set(encoded.rejected.map((item) => item.engram))
    const done = chosen.filter((item) => !failed.has(item.engram))
    const accepted = done.length > 0 ? await confirmations.accept(done.map((item) => item.id), user) : []
    return { accepted, report: encoded, rejected: [] }
  }

  return {
    mode,
    encode: (engrams, context) => run(engrams, true, context),
    encodeConfirmed: (engrams, context) => run(engrams, false, context),
    pendingConfirmations: (user) => confirmations.pending(user),
    acceptConfirmations: accept,
    async rejectConfirmations(selection, user) {
      const chosen = await selected(selection, user)
      const rejected = chosen.length > 0 ? await confirmations.reject(chosen.map((item) => item.id), user) : []
      return { accepted: [], report: emptyReport(), rejected }
    },
  }
}

/**
 * The encoder as one viewer uses it (decision 0017): an engram without an owner becomes the
 * viewer's (its user's, else the agent's), and a promotion to another owner is asked of that user.
 * Every producer inside a session (memorize, the error learner, the pattern monitor, sleep replay,
 * identity extraction) encodes through one of these.
 */
export function encoderFor(encoder: Encoder, viewer: Viewer): Encoder {
  const owner = ownerOfUser(viewer.user)
  const context: EncodeContext = viewer.user === undefined ? {} : { user: viewer.user }
  return {
    encode: (engrams, given) =>
      encoder.encode(
        Array.isArray(engrams) ? engrams.map((engram) => (engram && typeof engram === 'object' && engram.owner === undefined ? { ...engram, owner } : engram)) : engrams,
        given ?? context,
      ),
  }
}
