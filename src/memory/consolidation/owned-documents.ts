/**
 * Every knowledge and procedure document of every owner's tree (the agent's, the shared one, each
 * user's), read once: what the daily and monthly consolidations go through.
 */
import type { MemoryDoc } from '../../core/memory-doc.ts'
import { docKindsWhere, kindSpec, type MemoryKindSpec } from '../../core/memory-kinds.ts'
import { type Owner, ownerOfUser } from '../../core/owner.ts'
import type { Backend, DocRef, DocumentStore } from '../../storage/contracts.ts'
import { type HomeLayout, ownerNamespace, ownerTree } from '../../storage/home-layout.ts'
import { DOC_FOLDERS, type ForgettableDocKind } from '../forgetting/forget-memory.ts'

/**
 * The kinds judged document by document (core/memory-kinds.ts): every forgettable kind but
 * episodes, which are day files judged once compressed (monthly-forgetting.ts).
 */
const REVIEWED_KINDS = docKindsWhere((spec) => spec.forgetting !== null && spec.forgetting !== 'episode') as Array<Exclude<ForgettableDocKind, 'episode'>>

export interface OwnedDocument {
  owner: Owner
  docKind: Exclude<ForgettableDocKind, 'episode'>
  /** The forgetting rules it is judged by, and the seed frontmatter it is given (its kind's, or the kind it is filed like). */
  judgedAs: 'knowledge' | 'procedure'
  ref: DocRef
  doc: MemoryDoc
  documents: DocumentStore
  /** Its memory path (`users/ada/knowledge/tea.md`). */
  path: string
  /** Its index source (`agents/<a>/users/ada/knowledge/tea.md`). */
  source: string
  /** Its frontmatter could not be read (the file is kept as it is, its body read as plain text). */
  unreadable: boolean
}

export async function* everyOwnedDocument(deps: { backend: Backend; layout: HomeLayout }): AsyncGenerator<OwnedDocument> {
  const owners: Owner[] = ['agent', 'shared', ...(await deps.backend.users()).map((user) => ownerOfUser(user))]
  for (const owner of owners) {
    const documents = deps.backend.owned(owner).documents
    const tree = ownerTree(deps.layout, owner).rel
    const unreadable = new Set((await documents.problems(REVIEWED_KINDS)).map((problem) => problem.file))
    for (const docKind of REVIEWED_KINDS) {
      for (const ref of await documents.list(docKind)) {
        const doc = await documents.read(docKind, ref.slug)
        if (!doc) continue
        const file = `${DOC_FOLDERS[docKind]}/${ref.slug}.md`
        yield { owner, docKind, judgedAs: (kindSpec(docKind) as MemoryKindSpec).forgetting as 'knowledge' | 'procedure', ref, doc, documents, path: `${ownerNamespace(owner)}${file}`, source: `${tree}/${file}`, unreadable: unreadable.has(ref.path) || unreadable.has(doc.path) }
      }
    }
  }
}
