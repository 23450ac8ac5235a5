/**
 * `engram export DIR` (decision 0036): the agent's whole memory written as the seeds' file tree,
 * from whichever backend holds it (memory-tree.ts says what goes where). Deterministic: the same
 * memory gives byte-identical files; only `manifest.json` carries the time of the export.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { type ProgressOptions, startPhase } from '../../core/progress.ts'
import type { Backend } from '../../storage/contracts.ts'
import type { SkillStore } from '../skills/skill-store.ts'
import { collectMemoryTree, type TreeCounts, type TreeProblem } from './memory-tree.ts'

export interface MemoryExportDeps {
  backend: Backend
  agent: string
  clock: Clock
  skills?: SkillStore
  /** The engram home: an export inside it is refused (it would become memory again). */
  home?: string
  /** engram's version, recorded in the manifest. */
  version: string
}

export interface MemoryExportReport {
  /** The folder written, absolute. */
  dir: string
  agent: string
  backend: Backend['name']
  counts: TreeCounts & { files: number }
  /** Every file written, relative to `dir`, sorted (manifest.json and README.md included). */
  written: string[]
  /** What could not be read from the stores and is not in the export. */
  problems: TreeProblem[]
}

/** Format of the tree, for the importer: bumped when a path or a rendering changes. */
export const MEMORY_TREE_FORMAT = { name: 'engram-memory-tree', version: 1 } as const

function invalid(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

async function isEmptyFolder(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true
    throw error
  }
}

/** Throws unless `dir` is a folder an export may write to: outside the home, empty unless `force`; `command` is named when no folder is given. */
export async function checkExportFolder(dir: string, home: string | undefined, force: boolean, command = 'engram export DIR'): Promise<string> {
  if (typeof dir !== 'string' || dir.trim() === '') throw invalid('The export needs a folder to write to.', `name it: \`${command}\``)
  const target = resolve(dir)
  if (home !== undefined) {
    const fromHome = relative(resolve(home), target)
    if (fromHome === '' || (!fromHome.startsWith('..') && !isAbsolute(fromHome))) {
      throw invalid(`${target} is inside the engram home; an export there would become memory again.`, 'export to a folder outside the home (ENGRAM_HOME)', { dir: target })
    }
  }
  if (!force && !(await isEmptyFolder(target))) {
    throw invalid(`${target} is not empty.`, 'export into a new or empty folder, or pass --force to write into this one (files of the same name are replaced)', { dir: target })
  }
  return target
}

function readme(agent: string, counts: TreeCounts, problems: TreeProblem[]): string {
  return [
    `# The memory of engram agent "${agent}"`,
    '',
    // The backend is named in the manifest only: the same memory gives the same tree from either backend.
    "This folder is the seeds' file tree, laid out as an embedded engram home lays it out (manifest.json says from which backend, when and with which engram);",
    '`engram import engram DIR` reads it back into any backend (importing it twice changes nothing).',
    '',
    `- agents/${agent}/memory/ — profile.md, rules.md, lessons.md and topics/ (${counts.engramFiles} file(s), ${counts.entries} entries, ${counts.topics} topic file(s) over every owner)`,
    `- agents/${agent}/knowledge/, procedures/, episodes/, state/ — documents with YAML frontmatter (${counts.knowledge} knowledge, ${counts.procedures} procedure(s), ${counts.episodes} episode day(s), ${counts.state} state)`,
    `- agents/${agent}/SYSTEM.md, SOUL.md — prompt layers (${counts.prompts})`,
    `- agents/${agent}/skills/<label>/ — skills (${counts.skills}): meta.json, declarative.md, chunks.md, code/, requirements.txt, stats.json`,
    `- agents/${agent}/users/<user>/ — each user's own memory, the same layout`,
    '- shared/ — memory every agent of the home shares, the same layout',
    `- shared/users/<user>.md — user profiles (${counts.userProfiles})`,
    '- project/.engram/ — project-scope engrams, when a project was open',
    '',
    'Not in this tree: conversations, the activity log, archived and earlier versions of documents, and the search index',
    '(`engram migrate` moves conversations and the activity log between backends). manifest.json lists every file.',
    ...(problems.length > 0 ? ['', `Not exported (${problems.length}): ${problems.map((problem) => `${problem.path}${problem.line ? `:${problem.line}` : ''} — ${problem.reason}`).join('; ')}`] : []),
    '',
  ].join('\n')
}

/**
 * Writes the agent's whole memory into `dir` (created when missing). Refuses a folder that is not
 * empty unless `force`, and a folder inside the home.
 */
export async function exportMemory(deps: MemoryExportDeps, dir: string, options: { force?: boolean } & ProgressOptions = {}): Promise<MemoryExportReport> {
  const target = await checkExportFolder(dir, deps.home, options.force === true)
  const tree = await collectMemoryTree({ backend: deps.backend, agent: deps.agent, ...(deps.skills ? { skills: deps.skills } : {}), reading: startPhase(options, 'reading memory') })
  await mkdir(target, { recursive: true })
  const paths = [...tree.files.keys()].sort()
  // Stopped between files, the folder holds some of them and no manifest.json: an export run again with --force writes it whole.
  const writing = startPhase(options, 'writing files', paths.length)
  for (const path of paths) {
    await writing.checkpoint()
    const file = join(target, ...path.split('/'))
    await mkdir(join(file, '..'), { recursive: true })
    await writeFile(file, tree.files.get(path) as string)
    writing.step()
  }
  const counts = { ...tree.counts, files: paths.length }
  const manifest = {
    format: MEMORY_TREE_FORMAT.name,
    formatVersion: MEMORY_TREE_FORMAT.version,
    engramVersion: deps.version,
    backend: deps.backend.name,
    agent: deps.agent,
    exportedAt: deps.clock.now().toISOString(),
    counts,
    files: paths,
    problems: tree.problems,
  }
  await writeFile(join(target, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  await writeFile(join(target, 'README.md'), readme(deps.agent, tree.counts, tree.problems))
  return { dir: target, agent: deps.agent, backend: deps.backend.name, counts, written: [...paths, 'README.md', 'manifest.json'].sort(), problems: tree.problems }
}
