/**
 * The file-backed EngramStore (Anton's Hippocampus): one scope's `memory/` folder with
 * `profile.md`, `rules.md`, `lessons.md` and `topics/<slug>.md`.
 *
 * Every write takes that file's lock, re-reads the file (a hand edit or another process may have
 * changed it), deduplicates, and replaces the file atomically (or appends); entries that arrive
 * while a write of their file waits for the lock are written together (decision 0027). Reads check the file every time (a
 * stat); its text is read again whenever it changed, so no cache can hide a hand edit. Lines the codec cannot read are kept verbatim
 * through every write and reported by `read()`. `writeTopic` rewrites a topic file under the lock
 * lessons are filed into it under; `archive` (when the owner's archive folder is given) is
 * engram-archive.ts.
 */
import { createHash } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import type { EngramEntry, EngramScope } from '../../core/engram.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { decodeUtf8Lossless, encodeUtf8Lossless } from '../../core/lossless-utf8.ts'
import { emptyMemoryFile, entriesOf, type MemoryFileDocument, type MemoryFileKind, parseMemoryFile, problemsOf, serializeMemoryFile } from '../../core/markdown-entry.ts'
import type { EncodeOutcome, EngramFile, EngramStore, Locks, ParseProblem } from '../contracts.ts'
import { addEntries, checkLessonKind, checkRuleKind, entryRecalls, groupWrite, identityEntries, preparedEntry, type QueuedEntry, rewrittenText, toolWisdom, topicSlug } from '../engram-entries.ts'
import { appendText, isTempFileName, writeFileAtomic } from '../atomic-write.ts'
import { assertTopicSlug, createFileEngramArchive } from './engram-archive.ts'
import { type FileStamp, fileStamp, unchanged } from './file-stamp.ts'
import { checkMemoryFile, DEFAULT_MAX_FILE_BYTES, readMemoryFile } from '../memory-file-read.ts'

/** Memory files up to this size keep their text between reads (a rules file is a few KB), at most this many. */
const RECENT_MAX_BYTES = 256 * 1024
const RECENT_MAX_FILES = 64

export interface FileEngramStoreOptions {
  /** The scope's `memory/` folder. Created on the first write. */
  dir: string
  scope: EngramScope
  locks: Locks
  clock: Clock
  /** Files larger than this are skipped and reported, never read (`memory.maxFileBytes`). */
  maxFileBytes?: number
  /**
   * The owner tree's `archive/` folder and the home's locks: where forgetting keeps this scope's
   * forgotten entries and topics (`EngramStore.archive`, engram-archive.ts). No archive without it.
   */
  archive?: { dir: string; locks: Locks }
}

/** A memory file as a reader finds it: its text, nothing, or something skipped (decision 0025). */
type FileText = { kind: 'text'; text: string } | { kind: 'missing' } | { kind: 'skipped'; reason: string }

// Moved to ../engram-entries.ts (the PostgreSQL store files topics the same way); kept here for its importers.
export { topicSlug }

/**
 * The lock a store over `dir` takes to write `file` (`rules`, `lessons`, `profile`, `topic:<slug>`).
 * Anything else that rewrites one of these files (the file tools, forgetting) takes the same lock.
 */
export function engramFileLockName(dir: string, file: string): string {
  // Lock names must differ between a home's global memory and each project's memory.
  const dirKey = createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 12)
  return `engrams:${dirKey}:${file}`
}

/** Creates the store. Nothing is touched on disk until the first write. */
export function createFileEngramStore(options: FileEngramStoreOptions): EngramStore {
  const { dir, scope, locks, clock } = options
  const topicsDir = join(dir, 'topics')
  const limits = { root: dir, maxBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES }

  function pathOf(file: EngramFile): string {
    return join(dir, `${file}.md`)
  }

  /*
   * Every turn reads the same few files several times (the memory context, tool wisdom for each
   * tool, of each owner's store): their text is kept here, used again only while the file's stamp
   * (inode, size, modification and change times) is the one it was read with and settled
   * (file-stamp.ts). A write replaces the file, an append grows it, and a hand edit in place — even
   * at the same size within the same clock tick — is read again.
   *
   * Never throws and never blocks: a folder, a pipe, a link that loops or leads out of the memory
   * folder, or a file over the size limit is `skipped` (decision 0025). Bytes that are not UTF-8
   * are kept through every rewrite (lossless-utf8.ts).
   */
  const recent = new Map<string, { stamp: FileStamp; text: string }>()
  async function readText(path: string): Promise<FileText> {
    const readAt = Date.now()
    // A missing file is the common case for a new owner's store: no exception is built for it.
    const checked = checkMemoryFile(path, limits)
    if (checked.kind !== 'file') {
      recent.delete(path)
      return checked
    }
    const known = recent.get(path)
    if (known && unchanged(known.stamp, checked.stat)) return { kind: 'text', text: known.text }
    const read = await readMemoryFile(path, limits)
    if (read.kind !== 'read') {
      recent.delete(path)
      return read
    }
    const text = decodeUtf8Lossless(read.bytes)
    if (BigInt(read.bytes.length) === read.stat.size && read.bytes.length <= RECENT_MAX_BYTES) {
      if (recent.size >= RECENT_MAX_FILES) recent.clear()
      recent.set(path, { stamp: fileStamp(read.stat, readAt), text })
    } else recent.delete(path)
    return { kind: 'text', text }
  }

  /** The text a write starts from; a file that readers skip is never written over. */
  async function textForWrite(path: string): Promise<string | null> {
    const found = await readText(path)
    if (found.kind === 'text') return found.text
    if (found.kind === 'missing') return null
    throw new EngramError({
      code: ErrorCode.storageUnavailable,
      category: 'user',
      message: `Cannot write to memory file ${path}: it is ${found.reason}.`,
      fix: 'Move or remove what is at that path (engram keeps it as it is and writes nothing over it), then save the memory again.',
      details: { path, reason: found.reason },
    })
  }

  async function load(path: string, kind: MemoryFileKind, topic?: string): Promise<{ doc: MemoryFileDocument; skipped?: string }> {
    const found = await readText(path)
    if (found.kind === 'text') return { doc: parseMemoryFile(found.text, kind) }
    return { doc: emptyMemoryFile(kind, topic), ...(found.kind === 'skipped' ? { skipped: found.reason } : {}) }
  }

  async function entriesIn(file: EngramFile): Promise<EngramEntry[]> {
    return entriesOf((await load(pathOf(file), file)).doc)
  }

  async function locked<T>(file: string, fn: () => Promise<T>): Promise<T> {
    const outcome = await locks.withLock(engramFileLockName(dir, file), fn)
    if (outcome.kind === 'done') return outcome.value
    // withLock only reports busy when asked not to wait; waiting ends in a thrown lock_busy.
    throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `Memory file ${file} is locked.` })
  }

  const prepared = (entry: EngramEntry): EngramEntry => preparedEntry(entry, clock)

  /** Entries waiting for their file's next group write (../engram-entries.ts `groupWrite`), by lock name. */
  const queued = new Map<string, QueuedEntry[]>()

  /** Adds `entry` to a file unless an entry with the same dedupe key (and kind) is there. */
  function encodeInto(path: string, kind: MemoryFileKind, lockName: string, entry: EngramEntry, topic?: string): Promise<EncodeOutcome> {
    return groupWrite(queued, lockName, entry, (take) => locked(lockName, () => commitGroup(path, kind, take(), topic)))
  }

  /**
   * One read, dedupe and write of `path` for a group of entries, in their order, each settled with
   * its own outcome once the write is on disk (an entry that cannot go in is rejected alone). Call
   * it holding the file's lock; it throws, settling nothing, when the file cannot be read or written.
   */
  async function commitGroup(path: string, kind: MemoryFileKind, group: QueuedEntry[], topic?: string): Promise<void> {
    const text = await textForWrite(path)
    const { doc, added, settle } = addEntries(text === null ? emptyMemoryFile(kind, topic) : parseMemoryFile(text, kind), group, topic)
    if (added > 0) {
      const after = serializeMemoryFile(doc)
      // Lessons and topics grow at the end: appending the new lines (one O_APPEND write, fsync'd)
      // instead of rewriting the file keeps encoding O(1) in the file's size on disk. Anything else
      // (a rule inserted mid-file, a new file) is rewritten atomically.
      if (text !== null && text.length > 0 && after.startsWith(text)) await appendText(path, after.slice(text.length))
      else await writeFileAtomic(path, encodeUtf8Lossless(after))
    }
    for (const done of settle) done()
  }

  async function rewrite(file: EngramFile, entries: EngramEntry[] | ((current: EngramEntry[]) => EngramEntry[] | null)): Promise<void> {
    await locked(file, async () => {
      const after = rewrittenText(await textForWrite(pathOf(file)), file, entries)
      if (after !== null) await writeFileAtomic(pathOf(file), encodeUtf8Lossless(after))
    })
  }

  const store: EngramStore = {
    scope,
    location: dir,

    ...entryRecalls(entriesIn),

    async recallTopic(slug) {
      const clean = topicSlug(slug)
      if (clean === '') return null
      const found = await readText(join(topicsDir, `${clean}.md`))
      return found.kind === 'text' ? found.text : null
    },

    async topicProblems() {
      const problems: ParseProblem[] = []
      for (const slug of await store.listTopics()) {
        const path = join(topicsDir, `${slug}.md`)
        const found = topicSlug(slug) === slug ? await readText(path) : ({ kind: 'skipped', reason: 'a topic file name that is not a topic slug (lower case, a-z, 0-9 and -)' } as const)
        if (found.kind === 'skipped') problems.push({ file: path, line: 0, text: '', reason: found.reason })
      }
      return problems
    },

    async listTopics() {
      try {
        const names = await readdir(topicsDir)
        return names
          .filter((name) => name.endsWith('.md') && !isTempFileName(name))
          .map((name) => name.slice(0, -3))
          .sort()
      } catch (error) {
        // No topics folder, or a file where it should be: no topics to list.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return []
        throw error
      }
    },

    async recallToolWisdom(tool) {
      return toolWisdom(await entriesIn('rules'), await store.recallLessons(), tool)
    },

    async encodeRule(entry) {
      checkRuleKind(entry)
      return encodeInto(pathOf('rules'), 'rules', 'rules', prepared(entry))
    },

    async encodeLesson(entry) {
      checkLessonKind(entry)
      const lesson = prepared(entry)
      const outcome = await encodeInto(pathOf('lessons'), 'lessons', 'lessons', lesson)
      const slug = lesson.topic === undefined ? '' : topicSlug(lesson.topic)
      // Cross-file even when lessons.md already had it: a crash between the two writes, or a
      // hand-deleted topic file, is repaired by encoding the lesson again.
      if (slug !== '') await encodeInto(join(topicsDir, `${slug}.md`), 'topic', `topic:${slug}`, lesson, lesson.topic)
      return outcome
    },

    async rewriteIdentity(entries) {
      await rewrite('profile', identityEntries(entries))
    },

    async rewriteAll(file, entries) {
      await rewrite(file, entries)
    },

    async writeTopic(slug, change) {
      assertTopicSlug(slug)
      const path = join(topicsDir, `${slug}.md`)
      await locked(`topic:${slug}`, async () => {
        const after = change(await textForWrite(path))
        if (after !== null) await writeFileAtomic(path, encodeUtf8Lossless(after))
      })
    },

    ...(options.archive
      ? {
          archive: createFileEngramArchive({
            dir: options.archive.dir,
            memoryDir: dir,
            scope,
            storeLocks: locks,
            topicLockName: (slug) => engramFileLockName(dir, `topic:${slug}`),
            homeLocks: options.archive.locks,
          }),
        }
      : {}),

    async read(file) {
      const path = pathOf(file)
      const { doc, skipped } = await load(path, file)
      if (skipped !== undefined) return { entries: [], problems: [{ file: path, line: 0, text: '', reason: skipped }] }
      const problems: ParseProblem[] = problemsOf(doc).map((problem) => ({ file: path, ...problem }))
      return { entries: entriesOf(doc), problems }
    },
  }
  return store
}
