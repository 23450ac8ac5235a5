/**
 * The archive of forgotten engram memory in the embedded home (decision 0023; `EngramArchive`):
 * files of the owner's tree under `archive/` — `forgotten/<file>.md` for forgotten rules, lessons
 * and profile facts, `forgotten/topics/<slug>.md` for forgotten topic files, a project's under
 * `forgotten/project/`. Forgetting moves a topic file there (across file systems too: a project's
 * topics live outside the home) and appends an entry.
 *
 * Locks, as forgetting has always taken them: a topic is moved under the lock its engram store
 * files lessons into it under (the store's locks: the project's for project memory); an archive of
 * entries under a lock of the home named by a hash of its path (lock files must not name users).
 * Files are read with the safe reader (decision 0025): a pipe never blocks, a link never leads out
 * of the folder, bytes that are not UTF-8 are kept through a rewrite, and a file readers skip is
 * never written over.
 */
import { constants } from 'node:fs'
import { copyFile, mkdir, readdir, rename, stat, unlink } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { dirname, join } from 'node:path'
import type { EngramScope } from '../../core/engram.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { decodeUtf8Lossless, encodeUtf8Lossless } from '../../core/lossless-utf8.ts'
import { ENGRAM_FILES, type EngramArchive, type Locks } from '../contracts.ts'
import { ARCHIVE_NAME, isArchiveNameOf, topicSlug } from '../engram-entries.ts'
import { appendText, writeFileAtomic } from '../atomic-write.ts'
import { DEFAULT_MAX_FILE_BYTES, readMemoryFile } from '../memory-file-read.ts'

export interface FileEngramArchiveOptions {
  /** The owner tree's `archive/` folder. */
  dir: string
  /** The scope's `memory/` folder (its topics are moved from and to `topics/`). */
  memoryDir: string
  scope: EngramScope
  /** The locks of the scope's engram store, and the name it locks a topic under. */
  storeLocks: Locks
  topicLockName(slug: string): string
  /** The home's locks (archives of entries are written under them, whatever the scope). */
  homeLocks: Locks
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT'
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (error: unknown) => {
      if (isMissing(error)) return false
      throw error
    },
  )
}

/** The text of a file about to be changed ('' when there is none); throws for one readers skip. */
async function readOrEmpty(path: string): Promise<string> {
  const read = await readMemoryFile(path, { root: dirname(path), maxBytes: DEFAULT_MAX_FILE_BYTES })
  if (read.kind === 'read') return decodeUtf8Lossless(read.bytes)
  if (read.kind === 'missing') return ''
  throw new EngramError({
    code: ErrorCode.storageUnavailable,
    category: 'user',
    message: `Cannot change memory file ${path}: it is ${read.reason}.`,
    fix: 'Move or remove what is at that path (engram keeps it as it is and writes nothing over it), then forget the memory again.',
    details: { path, reason: read.reason },
  })
}

/** Moves a file, across file systems too. */
async function moveFile(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true })
  try {
    await rename(from, to)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
    await copyFile(from, to, constants.COPYFILE_EXCL)
    await unlink(from)
  }
}

/** The home's lock of one archive file (named by a hash of its path: lock files must not name users). */
function archiveLockName(absolute: string): string {
  return `forgotten:${createHash('sha256').update(absolute).digest('hex').slice(0, 16)}`
}

async function withLock<T>(locks: Locks, name: string, fn: () => Promise<T>): Promise<T> {
  const outcome = await locks.withLock(name, fn)
  if (outcome.kind === 'done') return outcome.value
  throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: 'Memory is being written by another process.', fix: 'retry in a moment' })
}

/** Refuses a name that is not a topic slug (`invalid_argument`). */
export function assertTopicSlug(slug: string): void {
  if (typeof slug !== 'string' || slug === '' || topicSlug(slug) !== slug) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${JSON.stringify(slug)} is not a topic slug.`,
      fix: 'Name the topic in lower case with a-z, 0-9 and - (topicSlug gives it).',
    })
  }
}

/** The archive of one scope's engram files in an owner's tree. Nothing is created on disk until written. */
export function createFileEngramArchive(options: FileEngramArchiveOptions): EngramArchive {
  const { dir, memoryDir, scope } = options
  const part = scope === 'project' ? 'forgotten/project/' : 'forgotten/'
  const pathOf = (name: string): string => join(dir, ...`${name}.md`.split('/'))
  const topicPaths = (slug: string): { live: string; archived: string } => {
    assertTopicSlug(slug)
    return { live: join(memoryDir, 'topics', `${slug}.md`), archived: pathOf(`${part}topics/${slug}`) }
  }
  const topicLocked = <T>(slug: string, fn: () => Promise<T>): Promise<T> => withLock(options.storeLocks, options.topicLockName(slug), fn)

  return {
    async list() {
      const names: string[] = []
      for (const at of ['forgotten/', 'forgotten/project/']) {
        for (const file of ENGRAM_FILES) if (await exists(pathOf(`${at}${file}`))) names.push(`${at}${file}`)
        const topics = await readdir(join(dir, ...`${at}topics`.split('/'))).catch(() => [] as string[])
        for (const name of topics) if (name.endsWith('.md') && ARCHIVE_NAME.test(`${at}topics/${name.slice(0, -3)}`)) names.push(`${at}topics/${name.slice(0, -3)}`)
      }
      return names.sort()
    },

    async read(name) {
      if (typeof name !== 'string' || !ARCHIVE_NAME.test(name)) return null
      const read = await readMemoryFile(pathOf(name), { root: dir, maxBytes: DEFAULT_MAX_FILE_BYTES })
      return read.kind === 'read' ? decodeUtf8Lossless(read.bytes) : null
    },

    async updateEntries(file, change) {
      const absolute = pathOf(`${part}${file}`)
      await withLock(options.homeLocks, archiveLockName(absolute), async () => {
        const before = await readOrEmpty(absolute)
        const after = change(before)
        if (after === null) return
        // What only grows is appended (one write), as a forgotten entry is; anything else is rewritten atomically.
        if (before !== '' && after.startsWith(before)) await appendText(absolute, after.slice(before.length))
        else await writeFileAtomic(absolute, encodeUtf8Lossless(after))
      })
    },

    async put(name, text) {
      if (!isArchiveNameOf(scope, name)) {
        throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `${JSON.stringify(name)} is not a name of the ${scope} scope's archive.`, fix: 'Pass a name list() gives.' })
      }
      const absolute = pathOf(name)
      return withLock(options.homeLocks, archiveLockName(absolute), async () => {
        const read = await readMemoryFile(absolute, { root: dir, maxBytes: DEFAULT_MAX_FILE_BYTES })
        if (read.kind === 'read') return decodeUtf8Lossless(read.bytes) === text ? 'there' : 'occupied'
        // What readers skip (a folder, a pipe, an oversized file) is never written over.
        if (read.kind !== 'missing') return 'occupied'
        await writeFileAtomic(absolute, encodeUtf8Lossless(text))
        return 'written'
      })
    },

    async forgetTopic(slug, stamp) {
      const { live, archived } = topicPaths(slug)
      return topicLocked(slug, async () => {
        if (!(await exists(live))) return false
        // A topic forgotten before under the same name stays archived beside it, never overwritten.
        if (await exists(archived)) await moveFile(archived, archived.replace(/\.md$/, `.${stamp}.md`))
        await moveFile(live, archived)
        return true
      })
    },

    async restoreTopic(slug) {
      const { live, archived } = topicPaths(slug)
      return topicLocked(slug, async () => {
        if (!(await exists(archived))) return 'missing' as const
        if (await exists(live)) return 'occupied' as const
        await moveFile(archived, live)
        return 'restored' as const
      })
    },

    async purgeTopic(slug) {
      const { live, archived } = topicPaths(slug)
      return topicLocked(slug, async () => {
        const folder = dirname(archived)
        const aside = (await readdir(folder).catch(() => [] as string[])).filter((name) => name.startsWith(`${slug}.`) && name.endsWith('.md')).map((name) => join(folder, name))
        let deleted = 0
        for (const file of [live, ...aside]) {
          try {
            await unlink(file)
            deleted++
          } catch (error) {
            if (!isMissing(error)) throw error
          }
        }
        return deleted
      })
    },
  }
}
