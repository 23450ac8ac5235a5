/**
 * The skill library on disk: one folder per skill under `agents/<agent>/skills/` (see skill.ts for
 * the layout). Every write takes the skill's lock and replaces files atomically; counters are never
 * wiped by a save; a folder that cannot be loaded is reported and left untouched; removing a skill
 * moves its folder to the archive, it does not delete it.
 */
import { mkdir, readdir, rename, stat } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Locks } from '../../storage/contracts.ts'
import { isTempFileName, writeFileAtomic } from '../../storage/atomic-write.ts'
import { type PathStamps, stampPaths, stillStamped } from '../../storage/path-stamps.ts'
import { DEFAULT_MAX_FILE_BYTES, type MemoryFileLimits, readMemoryFile } from '../../storage/memory-file-read.ts'
import { assertSafeLabel, CLOSEST_MATCH_CUTOFF, closestLabel, isSafeLabel, makeUniqueLabel } from './labels.ts'
import {
  emptyStats,
  type Skill,
  type SkillInput,
  type SkillMeta,
  type SkillProblem,
  type SkillStage,
  type SkillStats,
  type SkillSummary,
  type StageCounters,
  stageKey,
} from './skill.ts'

export interface SkillStoreOptions {
  /** The agent's `skills/` folder (created on the first save). */
  dir: string
  clock: Clock
  locks: Locks
  /** Where removed skills go; default `<dir>/../archive/skills`. */
  archiveDir?: string
  /** Skill files larger than this are not read; their skill is reported (`memory.maxFileBytes`). */
  maxFileBytes?: number
}

export interface SkillListing {
  /** Every loadable skill, sorted by label. */
  skills: Skill[]
  /** Folders that could not be loaded (left as they are). */
  problems: SkillProblem[]
}

export interface SkillStore {
  readonly dir: string
  list(): Promise<SkillListing>
  /** Label, name and when_to_use of every loadable skill, sorted by label; nothing else is read. */
  listSummaries(): Promise<SkillSummary[]>
  /** Labels of every loadable skill, sorted. */
  labels(): Promise<string[]>
  /** The skill, or null when absent or not loadable (see `list().problems` for why). */
  load(label: string): Promise<Skill | null>
  /** Create or update a skill. Existing counters, creation time and unknown meta keys are kept. */
  save(input: SkillInput): Promise<Skill>
  /** Move the skill's folder to the archive; returns where it went. Throws `not_found`. */
  delete(label: string): Promise<string>
  /** Bump a stage's `recommended` counter under the skill's lock; returns the new counters. */
  incrementRecommended(label: string, stage?: SkillStage): Promise<SkillStats>
  /** Bump a stage's `used` counter under the skill's lock; returns the new counters. */
  incrementUsed(label: string, stage?: SkillStage): Promise<SkillStats>
  /** The existing label closest to `input` (typo recovery), or undefined below `cutoff`. */
  closestMatch(input: string, cutoff?: number): Promise<{ label: string; ratio: number } | undefined>
  /** A label derived from `base` that no skill folder uses yet. */
  makeUniqueLabel(base: string): Promise<string>
}

const META = 'meta.json'
const DECLARATIVE = 'declarative.md'
const CHUNKS = 'chunks.md'
const CODE = 'code'
const REQUIREMENTS = 'requirements.txt'
const STATS = 'stats.json'

type Loaded = { kind: 'skill'; skill: Skill; statsProblem?: string } | { kind: 'problem'; problem: SkillProblem } | { kind: 'absent' }

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR'
}

/**
 * A skill file's text, or undefined when there is none. A file that cannot be read (a folder, a
 * pipe, a link out of the skills folder, too large: decision 0025) throws, and `list()` reports
 * its skill.
 */
async function readText(path: string, limits: MemoryFileLimits): Promise<string | undefined> {
  const read = await readMemoryFile(path, limits)
  if (read.kind === 'read') return read.bytes.toString('utf8')
  if (read.kind === 'missing') return undefined
  throw new EngramError({
    code: ErrorCode.storageCorrupt,
    category: 'user',
    message: `${relative(limits.root, path).split(sep).join('/')} is ${read.reason}`,
    fix: '`engram status` lists the files engram cannot read, with the reason; edit or remove this one',
  })
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}

function counter(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0
}

/** Parses `stats.json`; undefined when it is not a JSON object (the caller reports it). */
export function parseStats(text: string): SkillStats | undefined {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const record = data as Record<string, unknown>
  const stats: SkillStats = { ...record, ...emptyStats() }
  for (const key of ['stage_1', 'stage_2', 'stage_3'] as const) {
    const stage = record[key]
    if (typeof stage === 'object' && stage !== null) {
      const s = stage as Record<string, unknown>
      stats[key] = { ...s, recommended: counter(s.recommended), used: counter(s.used) } as StageCounters
    }
  }
  return stats
}

async function listFiles(root: string): Promise<string[]> {
  const out: string[] = []
  async function walk(folder: string): Promise<void> {
    let entries: import('node:fs').Dirent[]
    try {
      entries = await readdir(folder, { withFileTypes: true })
    } catch (error) {
      if (isMissing(error)) return
      throw error
    }
    for (const entry of entries) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (!isTempFileName(entry.name)) out.push(relative(root, path).split(sep).join('/'))
    }
  }
  await walk(root)
  return out.sort()
}

function stamp(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-')
}

/** Opens the skill library in `options.dir`. Nothing is touched on disk until the first write. */
export function createSkillStore(options: SkillStoreOptions): SkillStore {
  const { dir, clock, locks } = options
  const archiveDir = options.archiveDir ?? join(dirname(dir), 'archive', 'skills')
  const limits: MemoryFileLimits = { root: dir, maxBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES }

  async function locked<T>(label: string, fn: () => Promise<T>): Promise<T> {
    const outcome = await locks.withLock(`skill:${dir}:${label}`, fn)
    if (outcome.kind === 'done') return outcome.value
    throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `Skill "${label}" is locked by another writer.` })
  }

  async function loadFolder(label: string): Promise<Loaded> {
    const folder = join(dir, label)
    const problem = (reason: string): Loaded => ({ kind: 'problem', problem: { label, dir: folder, reason } })
    const metaText = await readText(join(folder, META), limits)
    if (metaText === undefined) {
      const exists = await stat(folder).then(
        (info) => info.isDirectory(),
        () => false,
      )
      return exists ? problem('meta.json is missing') : { kind: 'absent' }
    }
    let raw: unknown
    try {
      raw = JSON.parse(metaText)
    } catch (error) {
      return problem(`meta.json is not valid JSON: ${(error as Error).message}`)
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return problem('meta.json is not a JSON object')
    const record = raw as Record<string, unknown>
    const whenToUse = nonEmptyString(record.when_to_use) ?? nonEmptyString(record.description)
    if (!whenToUse) return problem('meta.json has no when_to_use (the cue that says when the skill applies)')
    const declarative = await readText(join(folder, DECLARATIVE), limits)
    if (declarative === undefined) return problem('declarative.md (the stage-1 procedure) is missing')

    const chunks = await readText(join(folder, CHUNKS), limits)
    const requirements = await readText(join(folder, REQUIREMENTS), limits)
    const codeFiles = await listFiles(join(folder, CODE))
    const statsText = await readText(join(folder, STATS), limits)
    let stats = emptyStats()
    let statsProblem: string | undefined
    if (statsText !== undefined) {
      const parsed = parseStats(statsText)
      if (parsed) stats = parsed
      else statsProblem = 'stats.json is not a JSON object; counters read as 0 and the file is kept until the next bump preserves it'
    }
    const provenance =
      typeof record.provenance === 'object' && record.provenance !== null && !Array.isArray(record.provenance)
        ? (record.provenance as SkillMeta['provenance'])
        : { source: nonEmptyString(record.provenance) ?? 'unknown' }
    const meta: SkillMeta = {
      ...record,
      // The folder is the identity: a meta.json copied from another skill must not alias it.
      label,
      name: nonEmptyString(record.name) ?? label,
      when_to_use: whenToUse,
      provenance,
      created_at: nonEmptyString(record.created_at) ?? '',
      updated_at: nonEmptyString(record.updated_at) ?? '',
      has_declarative: true,
      has_chunks: chunks !== undefined,
      has_code: codeFiles.length > 0,
      has_requirements: requirements !== undefined,
    }
    const skill: Skill = {
      label,
      meta,
      declarative,
      codeFiles,
      stats,
      dir: folder,
      ...(chunks !== undefined ? { chunks } : {}),
      ...(requirements !== undefined ? { requirements } : {}),
    }
    return statsProblem ? { kind: 'skill', skill, statsProblem } : { kind: 'skill', skill }
  }

  async function folderNames(): Promise<string[]> {
    try {
      const entries = await readdir(dir, { withFileTypes: true })
      return entries
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
        .map((entry) => entry.name)
        .sort()
    } catch (error) {
      if (isMissing(error)) return []
      throw error
    }
  }

  async function list(): Promise<SkillListing> {
    const skills: Skill[] = []
    const problems: SkillProblem[] = []
    for (const name of await folderNames()) {
      if (!isSafeLabel(name)) {
        problems.push({ label: name, dir: join(dir, name), reason: 'the folder name is not a valid skill label' })
        continue
      }
      try {
        const loaded = await loadFolder(name)
        if (loaded.kind === 'skill') {
          skills.push(loaded.skill)
          if (loaded.statsProblem) problems.push({ label: name, dir: loaded.skill.dir, reason: loaded.statsProblem })
        } else if (loaded.kind === 'problem') problems.push(loaded.problem)
      } catch (error) {
        problems.push({ label: name, dir: join(dir, name), reason: `cannot be read: ${(error as Error).message}` })
      }
    }
    return { skills, problems }
  }

  async function load(label: string): Promise<Skill | null> {
    if (!isSafeLabel(label)) return null
    const loaded = await loadFolder(label).catch((): Loaded => ({ kind: 'absent' }))
    return loaded.kind === 'skill' ? loaded.skill : null
  }

  async function writeStats(folder: string, stats: SkillStats): Promise<void> {
    await writeFileAtomic(join(folder, STATS), `${JSON.stringify(stats, null, 2)}\n`)
  }

  async function bump(label: string, stage: SkillStage, field: keyof StageCounters): Promise<SkillStats> {
    assertSafeLabel(label)
    return locked(label, async () => {
      const loaded = await loadFolder(label)
      if (loaded.kind !== 'skill') throw notFound(label, await labels())
      const folder = loaded.skill.dir
      if (loaded.statsProblem) {
        // Lossless: the unreadable counters are kept beside the fresh ones for a person to merge.
        await rename(join(folder, STATS), join(folder, `${STATS}.broken-${stamp(clock.now())}`))
      }
      const stats = loaded.skill.stats
      const key = stageKey(stage)
      stats[key] = { ...stats[key], [field]: stats[key][field] + 1 }
      await writeStats(folder, stats)
      return stats
    })
  }

  /*
   * The summaries, asked twice per turn (the prompt's skill list and priming's matcher): read again
   * only when the folder, a skill's folder or a file a skill is loaded from changed (file-stamp.ts),
   * so a skill written by another process is seen on the next turn and nothing unchanged is listed.
   */
  let summaries: { stamps: PathStamps; value: SkillSummary[] } | undefined
  const SKILL_FILES = [META, DECLARATIVE, CHUNKS, REQUIREMENTS, STATS, CODE]
  async function readSummaries(): Promise<SkillSummary[]> {
    if (summaries && stillStamped(summaries.stamps)) return summaries.value.map((summary) => ({ ...summary }))
    // Stamped before reading: a write during the read leaves a stamp that no longer matches.
    const readAt = Date.now()
    const before = stampPaths([dir], readAt)
    const names = before[0]?.stamp === undefined ? [] : await folderNames()
    const stamps = [...before, ...stampPaths(names.flatMap((name) => [join(dir, name), ...SKILL_FILES.map((file) => join(dir, name, file))]), readAt)]
    const value = (await list()).skills.map((skill) => ({ label: skill.label, name: skill.meta.name, when_to_use: skill.meta.when_to_use }))
    summaries = { stamps, value }
    return value.map((summary) => ({ ...summary }))
  }

  async function labels(): Promise<string[]> {
    return (await list()).skills.map((skill) => skill.label)
  }

  return {
    dir,
    list,
    listSummaries: readSummaries,
    labels,
    load,

    async save(input) {
      assertSafeLabel(input.label)
      if (input.whenToUse.trim() === '' || input.declarative.trim() === '') {
        throw new EngramError({
          code: ErrorCode.invalidArgument,
          category: 'user',
          message: `Skill "${input.label}" needs both a when_to_use cue and a declarative procedure.`,
          fix: 'Give the skill a one-line "when to use" and the step-by-step procedure (declarative.md).',
          details: { label: input.label },
        })
      }
      for (const path of Object.keys(input.code ?? {})) {
        if (path === '' || path.startsWith('/') || path.split(/[\\/]/).some((part) => part === '..' || part === '')) {
          throw new EngramError({
            code: ErrorCode.invalidArgument,
            category: 'user',
            message: `Skill code file ${JSON.stringify(path)} would land outside the skill's code/ folder.`,
            fix: 'Use relative paths inside code/, such as "helpers/load.py".',
          })
        }
      }
      return locked(input.label, async () => {
        const folder = join(dir, input.label)
        await mkdir(folder, { recursive: true })
        let previous: Record<string, unknown> = {}
        const metaText = await readText(join(folder, META), limits)
        if (metaText !== undefined) {
          try {
            const parsed: unknown = JSON.parse(metaText)
            if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) previous = parsed as Record<string, unknown>
          } catch {
            // An unreadable meta.json is replaced, but kept beside the new one: nothing is lost.
            await rename(join(folder, META), join(folder, `${META}.broken-${stamp(clock.now())}`))
          }
        }
        await writeFileAtomic(join(folder, DECLARATIVE), input.declarative.endsWith('\n') ? input.declarative : `${input.declarative}\n`)
        if (input.chunks !== undefined) await writeFileAtomic(join(folder, CHUNKS), input.chunks)
        for (const [path, content] of Object.entries(input.code ?? {})) await writeFileAtomic(join(folder, CODE, ...path.split(/[\\/]/)), content)
        if (input.requirements !== undefined) await writeFileAtomic(join(folder, REQUIREMENTS), input.requirements)
        // Never wipe accumulated counters: stats.json is only created, never reset, by a save.
        if ((await readText(join(folder, STATS), limits)) === undefined) await writeStats(folder, emptyStats())

        const now = clock.now().toISOString()
        const codeFiles = await listFiles(join(folder, CODE))
        const meta: SkillMeta = {
          ...previous,
          label: input.label,
          name: input.name.trim() || input.label,
          ...(input.description !== undefined ? { description: input.description } : {}),
          when_to_use: input.whenToUse.trim(),
          provenance: input.provenance ?? (previous.provenance as SkillMeta['provenance'] | undefined) ?? { source: 'user' },
          created_at: nonEmptyString(previous.created_at) ?? now,
          updated_at: now,
          has_declarative: true,
          has_chunks: (await readText(join(folder, CHUNKS), limits)) !== undefined,
          has_code: codeFiles.length > 0,
          has_requirements: (await readText(join(folder, REQUIREMENTS), limits)) !== undefined,
        }
        // meta.json goes last: a folder without it is reported as incomplete, never half-read.
        await writeFileAtomic(join(folder, META), `${JSON.stringify(meta, null, 2)}\n`)
        const loaded = await loadFolder(input.label)
        if (loaded.kind !== 'skill') throw new EngramError({ code: ErrorCode.storageCorrupt, category: 'system', message: `Skill "${input.label}" could not be read back after saving.` })
        return loaded.skill
      })
    },

    async delete(label) {
      assertSafeLabel(label)
      return locked(label, async () => {
        const folder = join(dir, label)
        const exists = await stat(folder).then(
          (info) => info.isDirectory(),
          () => false,
        )
        if (!exists) throw notFound(label, await labels())
        await mkdir(archiveDir, { recursive: true })
        const base = join(archiveDir, `${label}.${stamp(clock.now())}`)
        for (let n = 1; ; n++) {
          const target = n === 1 ? base : `${base}-${n}`
          if (await stat(target).then(() => true, () => false)) continue
          await rename(folder, target)
          return target
        }
      })
    },

    incrementRecommended: (label, stage = 1) => bump(label, stage, 'recommended'),
    incrementUsed: (label, stage = 1) => bump(label, stage, 'used'),

    async closestMatch(input, cutoff = CLOSEST_MATCH_CUTOFF) {
      return closestLabel(input, await labels(), cutoff)
    },

    async makeUniqueLabel(base) {
      return makeUniqueLabel(base, await folderNames())
    },
  }
}

/** `not_found` for a skill label, listing what exists. */
export function notFound(label: string, available: string[]): EngramError {
  return new EngramError({
    code: ErrorCode.notFound,
    category: 'user',
    message: `No skill is labelled "${label}".`,
    fix: available.length > 0 ? `Use one of the saved skills: ${available.join(', ')}.` : 'No skills are saved yet; save one with `engram skills save`.',
    details: { label, available },
  })
}
