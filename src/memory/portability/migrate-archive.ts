/**
 * What forgetting, merging and rewriting keep of an agent's memory, moved by `engram migrate`
 * (decision 0052): each owner's archived documents (`archive/forgotten|merged|procedure_versions/…`),
 * saved versions (`archive/versions/…`, and those retention moved to `archive/forgotten/versions/…`)
 * and forgotten engram entries and topics (`archive/forgotten/…`), each put into the target at the
 * path it has in the source with its text as it is (`DocumentStore.putArchived`, `EngramArchive.put`),
 * so `engram restore` and `engram history` find them there. Putting one twice changes nothing, so a
 * rerun after a kill finishes the rest; one the target holds with another text is left as it is and
 * reported.
 */
import { messageOf } from '../../core/errors.ts'
import { parseFrontmatter, serializeFrontmatter } from '../../core/frontmatter.ts'
import type { Owner } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import { type TreeProblem, treeRelOf } from './memory-tree.ts'

export interface ArchiveMoveCounts {
  /** Archived copies and saved versions of documents put into the target. */
  documents: number
  /** Forgotten engram files and topics put into the target. */
  forgotten: number
  /** Both kinds, already in the target with the same text. */
  alreadyThere: number
}

/** An archived file of one owner: where it is in the home's tree, what keeps it, and how to read it from a backend. */
interface ArchivedFile {
  path: string
  /** A document's copy or version (DocumentStore), or a forgotten engram file or topic by its archive name (EngramArchive). */
  of: { kind: 'document' } | { kind: 'forgotten'; name: string }
  read(): Promise<string | null>
}

/** Every archived file of `owner` on `backend`, by the path the embedded home has it; undefined when its seams do not read the archive. */
async function archivedFiles(backend: Backend, owner: Owner, agent: string): Promise<ArchivedFile[] | undefined> {
  const { documents } = backend.owned(owner)
  const forgotten = backend.owned(owner).engrams('global')?.archive
  if (!documents.archivedPaths || !documents.readArchived || !forgotten) return undefined
  const files: ArchivedFile[] = []
  for (const path of await documents.archivedPaths()) files.push({ path, of: { kind: 'document' }, read: async () => (await documents.readArchived?.(path)) ?? null })
  const tree = treeRelOf(owner, agent)
  for (const name of await forgotten.list()) files.push({ path: `${tree}/archive/${name}.md`, of: { kind: 'forgotten', name }, read: () => forgotten.read(name) })
  return files
}

/**
 * An archived text as both backends give it back: a row backend keeps a document's frontmatter
 * and body and serializes them again, so the digest compares what a document says, not how its
 * YAML was laid out; a forgotten engram file is kept as it is.
 */
function comparable(file: ArchivedFile, text: string): string {
  if (file.of.kind === 'forgotten') return text
  const parsed = parseFrontmatter(text)
  return serializeFrontmatter(parsed.frontmatter, parsed.body)
}

/** The archive of `owners` on `backend` as path → comparable text (for the digest; nothing when its seams do not read it). */
export async function archiveTexts(backend: Backend, owners: Owner[], agent: string): Promise<Map<string, string>> {
  const texts = new Map<string, string>()
  for (const owner of owners) {
    for (const file of (await archivedFiles(backend, owner, agent)) ?? []) {
      const text = await file.read()
      if (text !== null) texts.set(file.path, comparable(file, text))
    }
  }
  return texts
}

/** Moves the archive of each of `owners` from `from` into `to` (see the module comment). */
export async function moveArchive(from: Backend, to: Backend, owners: Owner[], agent: string, problems: TreeProblem[]): Promise<ArchiveMoveCounts> {
  const counts: ArchiveMoveCounts = { documents: 0, forgotten: 0, alreadyThere: 0 }
  for (const owner of owners) {
    try {
      const files = await archivedFiles(from, owner, agent)
      if (files === undefined) continue
      for (const file of files) {
        const text = await file.read()
        if (text === null) {
          problems.push({ path: file.path, reason: 'an archived file the source does not read (too large or not a file); not moved' })
          continue
        }
        const { of } = file
        const outcome =
          of.kind === 'document'
            ? await to.owned(owner).documents.putArchived?.(file.path, text)
            : await to.owned(owner).engrams(of.name.startsWith('forgotten/project/') ? 'project' : 'global')?.archive?.put(of.name, text)
        if (outcome === undefined) problems.push({ path: file.path, reason: `the ${to.name} target has no seam that puts it into its archive; not moved` })
        else if (outcome === 'occupied') problems.push({ path: file.path, reason: 'the target holds another text at this path of its archive; left as it is' })
        else if (outcome === 'there') counts.alreadyThere++
        else if (of.kind === 'document') counts.documents++
        else counts.forgotten++
      }
    } catch (error) {
      problems.push({ path: `archive of ${owner}`, reason: `not moved: ${messageOf(error)}` })
    }
  }
  return counts
}
