/**
 * Documents with YAML frontmatter: knowledge, procedures, episodes, user profiles, state and
 * prompt layers (AnimaWorks' archive). Field names follow the seed exactly so that AnimaWorks
 * memories import as they are.
 */
import { type DocKind, memoryKinds } from './memory-kinds.ts'

export type { DocKind }
/** Every document kind, in registry order (memory-kinds.ts). */
export const DOC_KINDS: readonly DocKind[] = memoryKinds().map(([kind]) => kind)

export type Frontmatter = Record<string, unknown>

/** Frontmatter of `knowledge/*.md` (all optional: hand-written files may have none). */
export interface KnowledgeFrontmatter {
  created_at?: string
  updated_at?: string
  source_episodes?: number
  confidence?: number
  auto_consolidated?: boolean
  version?: number
  superseded_by?: string
  supersedes?: string
  validated?: boolean
  /** Which path of consolidation's validation approved it: `entailed` (its sources say it outright) or `model`. */
  validation?: string
  protected?: boolean
  [key: string]: unknown
}

/** Frontmatter of `procedures/*.md`. */
export interface ProcedureFrontmatter {
  description?: string
  confidence?: number
  success_count?: number
  failure_count?: number
  version?: number
  created_at?: string
  updated_at?: string
  auto_distilled?: boolean
  protected?: boolean
  [key: string]: unknown
}

export interface MemoryDoc {
  kind: DocKind
  /** File name without `.md`, unique within its kind. */
  slug: string
  frontmatter: Frontmatter
  body: string
  /** Path relative to the engram home, with forward slashes. */
  path: string
  /** sha256 of the file's bytes as read; lets the index notice hand edits. */
  hash: string
}
