/**
 * A skill: one reusable procedure in procedural memory (Anton's striatum), stored as a folder
 * `skills/<label>/` whose stages coexist:
 *
 *   meta.json        label, name, description, when_to_use, provenance, presence flags, times
 *   declarative.md   stage 1 — the step-by-step procedure (always present)
 *   chunks.md        stage 2 — higher-level recipes (optional)
 *   code/            stage 3 — runnable helpers (optional), requirements.txt their dependencies
 *   stats.json       per-stage counters: { "stage_1": { "recommended": 0, "used": 0 }, … }
 *
 * On disk the field names are Anton's (snake_case) so skills written by Anton import as they are.
 */

export const SKILL_STAGES = [1, 2, 3] as const
export type SkillStage = (typeof SKILL_STAGES)[number]

export interface StageCounters {
  /** Times the skill was pulled into working memory (`recall_skill`) at this stage. */
  recommended: number
  /** Times the procedure was reported as actually followed at this stage. */
  used: number
}

/** `stats.json`. Unknown keys found in the file are kept on every rewrite. */
export interface SkillStats {
  stage_1: StageCounters
  stage_2: StageCounters
  stage_3: StageCounters
  [key: string]: unknown
}

/** Where a skill came from: `user` (hand-written or `--from` a file), `llm` (drafted), `import`. */
export interface SkillProvenance {
  source: string
  [key: string]: unknown
}

/** `meta.json`. Unknown keys found in the file are kept on every rewrite. */
export interface SkillMeta {
  label: string
  name: string
  description?: string
  when_to_use: string
  provenance: SkillProvenance
  created_at: string
  updated_at: string
  has_declarative: boolean
  has_chunks: boolean
  has_code: boolean
  has_requirements: boolean
  [key: string]: unknown
}

/** A skill as loaded from its folder. */
export interface Skill {
  label: string
  meta: SkillMeta
  /** Stage 1: the procedure. */
  declarative: string
  /** Stage 2, when present. */
  chunks?: string
  /** Stage 3 files under `code/`, relative paths with `/`, when present. */
  codeFiles: string[]
  requirements?: string
  stats: SkillStats
  /** Folder of the skill, absolute. */
  dir: string
}

/** What `save` is given. Times, presence flags and counters are the store's business. */
export interface SkillInput {
  label: string
  name: string
  whenToUse: string
  description?: string
  declarative: string
  chunks?: string
  /** Stage 3 helpers: relative path → file content. Replaces the whole `code/` folder when given. */
  code?: Record<string, string>
  requirements?: string
  provenance?: SkillProvenance
}

/** The lightweight listing the prompt builder uses (no procedure text loaded). */
export interface SkillSummary {
  label: string
  name: string
  when_to_use: string
}

/** A skill folder that could not be loaded; it is left as it is. */
export interface SkillProblem {
  label: string
  /** Folder, absolute. */
  dir: string
  reason: string
}

export function emptyStats(): SkillStats {
  return {
    stage_1: { recommended: 0, used: 0 },
    stage_2: { recommended: 0, used: 0 },
    stage_3: { recommended: 0, used: 0 },
  }
}

export function stageKey(stage: SkillStage): 'stage_1' | 'stage_2' | 'stage_3' {
  return `stage_${stage}` as const
}
