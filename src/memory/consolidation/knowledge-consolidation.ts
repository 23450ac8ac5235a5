/**
 * The model's part of daily consolidation (../shared/seeds/003 "Daily Consolidation Pipeline",
 * "Knowledge Validation", "Knowledge Contradiction Detection and Resolution", "Procedural Memory
 * Lifecycle"; DESIGN §5), one owner's episodes of one day at a time:
 *
 * 1. the day's episode sections not consolidated yet (episode-sources.ts), classified procedural
 *    or not by the seed's patterns;
 * 2. **procedure distillation** from the procedural ones — skipped when an existing procedure is
 *    at least 0.85 similar;
 * 3. **knowledge extraction** from the day's sections, with the issues they resolved (the seed's
 *    layer 3), code fences sanitised;
 * 4. **validation** of each candidate against its sources, the seed's cascade with rules in place
 *    of its NLI model (claim-validation.ts, decision 0048): a number, date or name the sources never
 *    state (normalised: "2 hours" is "two hours") rejects it; a source sentence saying the opposite
 *    ("failed" against "succeeded") rejects it; a candidate every sentence of which one source
 *    sentence says outright is approved with the seed's fast-path confidence 0.9, no model asked;
 *    only the rest go to the model (the seed's LLM stage), approved with 0.7. Each learned fact's
 *    `validation` says which path decided (`entailed` | `model`), each rejection likewise;
 * 5. **reconsolidation**: existing knowledge and procedures related to the day, which the new
 *    episodes show wrong or out of date, are rewritten (`version` + 1, the old version archived by
 *    the write path; a procedure's counts reset to 0 / 0 / 0.5);
 * 6. **contradictions** between each new fact and the existing knowledge most like it: a duplicate
 *    is not written again; a contradiction is resolved by *supersede* (the old fact keeps
 *    `superseded_by` and its validity interval, and stays, as history), *merge* (a merged fact
 *    replaces both, the originals go to `archive/merged/`) or *coexist* (both say when each holds).
 *
 * Everything a unit (owner, day) would change is planned first, with every model call made, and
 * written only when the plan is complete: a model that times out, fails or answers out of schema
 * leaves every file as it was, and the job fails with the step and the reason. A spent budget
 * stops the run cleanly; what is left stays for the next run. The complete plan is stored before
 * its first write and applied idempotently (unit-plan.ts, decision 0053): a process killed
 * while writing leaves a plan the next run finishes first, never half a unit. Each consolidated
 * unit's section ids are recorded last (jobs run `consolidation-episodes`), so a section is
 * consolidated once.
 *
 * Without a model nothing here runs: the run reports each step as pending with its reason, and a
 * later run with a model takes the backlog (`consolidation.backlogDays`). Nothing degraded is
 * written as if a model had written it.
 */
import { z } from 'zod'
import { isoDay } from '../../core/clock.ts'
import type { Clock } from '../../core/clock.ts'
import { describeError } from '../../core/errors.ts'
import type { Frontmatter } from '../../core/memory-doc.ts'
import type { Owner } from '../../core/owner.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { Backend, DocumentStore } from '../../storage/contracts.ts'
import { ownerNamespace } from '../../storage/home-layout.ts'
import { BudgetExhausted, type BudgetedLlm, budgetedLlm, type LlmBudget } from './llm-budget.ts'
import { type EpisodeSource, episodeOwners, episodeSections, isProcedural } from './episode-sources.ts'
import { judgeAgainstEpisodes } from './claim-validation.ts'
import { sanitizeFences, slugFor, textSimilarity, unsupportedFacts } from './text-facts.ts'
import { commitUnit, finishUnfinishedUnits, ownerDigest, type PlannedChange, stuckStep, type UnitPlan } from './unit-plan.ts'

/** The jobs-run name under which consolidated section ids are recorded. */
export const EPISODES_CONSOLIDATED = 'consolidation-episodes'

/** An existing procedure this similar to a distilled one makes it a duplicate (the seed's 0.85). */
export const PROCEDURE_DUPLICATE_SIMILARITY = 0.85
/** Existing memories at least this similar to the day's episodes are checked for reconsolidation. */
const RELATED_SIMILARITY = 0.2
const RECONSOLIDATION_CHECKS = 3
/** Existing knowledge at least this similar to a new fact is checked for a contradiction. */
const CONTRADICTION_SIMILARITY = 0.25
const CONTRADICTION_CHECKS = 2
/** The seed's confidence of a fact the LLM stage approved. */
const LLM_VALIDATED_CONFIDENCE = 0.7
/** The seed's confidence of a fact its NLI stage found entailed (entailment ≥ 0.6, LLM skipped); here, the rules'. */
const ENTAILED_CONFIDENCE = 0.9
const DISTILLED_CONFIDENCE = 0.4
const SECTION_CHARS = 4000

export interface ConsolidationSettings extends LlmBudget {
  /** How many days of episodes a run looks back over for what is not consolidated yet. */
  backlogDays: number
}

export interface KnowledgeConsolidationDeps {
  backend: Backend
  clock: Clock
  llm: Llm
  agent: string
  settings: ConsolidationSettings
}

export interface PendingStep {
  step: 'procedure distillation' | 'knowledge extraction' | 'validation' | 'reconsolidation' | 'contradiction detection' | 'duplicate merge wording' | 'pattern distillation' | 'contradiction scan' | 'low-activity merge' | 'unfinished unit'
  reason: string
  /** How many sections (or items) wait for it. */
  waiting: number
}

export interface KnowledgeConsolidationRun {
  /** The model used, when one ran. */
  model: string | undefined
  /** Episode sections consolidated by this run. */
  sections: number
  learned: Array<{ path: string; title: string; confidence: number; sources: string[]; validation: 'entailed' | 'model' }>
  /** Which path rejected each: a fact its sources never state, a source saying the opposite, the model. */
  rejected: Array<{ title: string; why: string; validation: 'rejected-facts' | 'rejected-contradicted' | 'rejected-model' }>
  /** Candidates the owner's knowledge already held. */
  known: Array<{ title: string; path: string }>
  distilled: Array<{ path: string; description: string }>
  /** Distilled procedures not written because one at least 0.85 similar exists. */
  similarProcedures: Array<{ description: string; path: string; similarity: number }>
  reconsolidated: Array<{ path: string; version: number; why: string }>
  contradictions: Array<{ strategy: 'supersede' | 'merge' | 'coexist'; old: string; new: string; why: string }>
  pending: PendingStep[]
  calls: number
  tokens: number
}

export function emptyKnowledgeRun(model?: string): KnowledgeConsolidationRun {
  return { model, sections: 0, learned: [], rejected: [], known: [], distilled: [], similarProcedures: [], reconsolidated: [], contradictions: [], pending: [], calls: 0, tokens: 0 }
}

// ---------------------------------------------------------------------------------------------
// Schemas: their descriptions are the instructions (DESIGN §5 "Structured output").

export const proceduresSchema = z.object({
  procedures: z
    .array(
      z.object({
        title: z.string().min(3).max(120).describe('What the procedure achieves, as a short imperative title ("Deploy the staging server").'),
        description: z.string().min(8).max(300).describe('One sentence saying when to use it; it is matched against future tasks.'),
        steps: z.array(z.string().min(2).max(400)).min(1).max(20).describe('The steps in order, only as the episodes show them.'),
      }),
    )
    .max(5)
    .describe('Procedures the episodes show being carried out and worth repeating; empty when none.'),
})

const knowledgeSchema = z.object({
  items: z
    .array(
      z.object({
        title: z.string().min(3).max(120).describe('The topic, short ("Staging deploy token").'),
        content: z.string().min(8).max(2000).describe('The durable facts in markdown: only what the episodes state, nothing about one passing task.'),
        sources: z.array(z.number().int().min(1)).min(1).max(20).describe('The numbers of the episode sections it comes from.'),
      }),
    )
    .max(8)
    .describe('Durable knowledge the episodes establish; empty when none.'),
})

const checkSchema = z.object({
  supported: z.boolean().describe('true only when every claim of the candidate is stated or directly implied by the source episodes.'),
  reason: z.string().max(300).describe('Which claim is unsupported, or why it is supported.'),
})

const reconsolidationSchema = z.object({
  update: z.boolean().describe('true only when the new episodes show that the memory is wrong or out of date.'),
  reason: z.string().max(300),
  content: z.string().max(4000).optional().describe('When update is true: the corrected memory in full, in markdown.'),
})

export const contradictionSchema = z.object({
  relation: z
    .enum(['unrelated', 'duplicate', 'contradiction'])
    .describe('duplicate: the new fact says nothing the existing one does not; contradiction: both cannot be true as stated; else unrelated.'),
  strategy: z
    .enum(['supersede', 'merge', 'coexist'])
    .optional()
    .describe('For a contradiction: supersede when the new fact updates the old one; merge when one text can hold both; coexist when each is true in its own context.'),
  reason: z.string().max(300),
  merged: z.string().max(4000).optional().describe('For merge: the merged fact in markdown.'),
  condition: z.string().max(300).optional().describe('For coexist: when each of the two holds.'),
})

// ---------------------------------------------------------------------------------------------
// The plan of one unit: the owner's documents as they will be, and the writes that make them so.

interface PlannedDoc {
  kind: 'knowledge' | 'procedure'
  slug: string
  frontmatter: Frontmatter
  body: string
  /** Read from the store (false: written by this plan). */
  existing: boolean
}

interface Plan {
  docs: Map<string, PlannedDoc>
  writes: Map<string, { doc: PlannedDoc; reasons: string[] }>
  merged: Array<{ kind: 'knowledge'; slug: string }>
}

const key = (kind: string, slug: string): string => `${kind}/${slug}`

function write(plan: Plan, doc: PlannedDoc, reason: string): void {
  plan.docs.set(key(doc.kind, doc.slug), doc)
  const pending = plan.writes.get(key(doc.kind, doc.slug))
  if (pending) {
    pending.doc = doc
    pending.reasons.push(reason)
  } else plan.writes.set(key(doc.kind, doc.slug), { doc, reasons: [reason] })
}

function docsOf(plan: Plan, kind: 'knowledge' | 'procedure'): PlannedDoc[] {
  return [...plan.docs.values()].filter((doc) => doc.kind === kind)
}

const isLive = (doc: PlannedDoc): boolean => typeof doc.frontmatter.superseded_by !== 'string' || doc.frontmatter.superseded_by === ''

async function loadDocs(documents: DocumentStore): Promise<Map<string, PlannedDoc>> {
  const docs = new Map<string, PlannedDoc>()
  for (const kind of ['knowledge', 'procedure'] as const) {
    for (const ref of await documents.list(kind)) {
      const doc = await documents.read(kind, ref.slug)
      if (doc) docs.set(key(kind, ref.slug), { kind, slug: ref.slug, frontmatter: doc.frontmatter, body: doc.body, existing: true })
    }
  }
  return docs
}

function numbered(sections: readonly EpisodeSource[]): string {
  return sections.map((section, i) => `### Section ${i + 1} (${section.day}, ${section.heading})\n${section.text.slice(0, SECTION_CHARS)}`).join('\n\n')
}

const version = (fm: Frontmatter): number => (typeof fm.version === 'number' && Number.isInteger(fm.version) && fm.version > 0 ? fm.version : 1)

/** The step a model call belongs to, so that a failure names it. */
class StepFailed extends Error {
  readonly step: string
  constructor(step: string, cause: unknown) {
    super(`${step}: ${describeError(cause)}`)
    this.step = step
  }
}

/** A procedure the model drafted, as written: its steps numbered, the seed's frontmatter of a distilled procedure. */
export function distilledProcedure(draft: z.infer<typeof proceduresSchema>['procedures'][number], now: string, model: string | undefined, lineage: Frontmatter): { body: string; frontmatter: Frontmatter } {
  const body = sanitizeFences(`# ${draft.title}\n\n${draft.steps.map((line, i) => `${i + 1}. ${line.replace(/\s+/g, ' ').trim()}`).join('\n')}\n`)
  return {
    body: `${body}\n`,
    frontmatter: {
      description: draft.description,
      confidence: DISTILLED_CONFIDENCE,
      success_count: 0,
      failure_count: 0,
      version: 1,
      created_at: now,
      updated_at: now,
      auto_distilled: true,
      protected: false,
      method: 'llm',
      ...(model ? { model } : {}),
      ...lineage,
    },
  }
}

/** A model call of `name`'s step: its failure names the step (a spent budget passes through). */
export async function step<T>(name: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof BudgetExhausted) throw error
    throw new StepFailed(name, error)
  }
}

/** Plans one owner's day; every model call is made here, nothing is written. */
async function planUnit(llm: BudgetedLlm, plan: Plan, sections: readonly EpisodeSource[], now: string, run: KnowledgeConsolidationRun, pathOf: (kind: string, slug: string) => string): Promise<void> {
  const model = llm.model
  const allText = sections.map((section) => section.text).join('\n\n')
  const resolved = [...new Set(sections.flatMap((section) => section.resolved))]

  // 2. Procedure distillation.
  const procedural = sections.filter((section) => isProcedural(`${section.heading}\n${section.text}`))
  if (procedural.length > 0) {
    const answer = await step('procedure distillation', () =>
      llm.generateObject({
        schema: proceduresSchema,
        name: 'procedures',
        system: 'You distil reusable procedures from the episodes of an AI agent\'s work. Only procedures the episodes show; steps as they were done.',
        messages: [{ role: 'user', content: numbered(procedural) }],
      }),
    )
    for (const draft of answer.procedures) {
      const text = `${draft.description}\n${draft.steps.join('\n')}`
      let best: { doc: PlannedDoc; similarity: number } | undefined
      for (const doc of docsOf(plan, 'procedure')) {
        const similarity = textSimilarity(text, `${String(doc.frontmatter.description ?? '')}\n${doc.body}`)
        if (!best || similarity > best.similarity) best = { doc, similarity }
      }
      if (best && best.similarity >= PROCEDURE_DUPLICATE_SIMILARITY) {
        run.similarProcedures.push({ description: draft.description, path: pathOf('procedure', best.doc.slug), similarity: Number(best.similarity.toFixed(2)) })
        continue
      }
      const slug = slugFor(draft.title, new Set(docsOf(plan, 'procedure').map((doc) => doc.slug)))
      write(plan, { kind: 'procedure', slug, existing: false, ...distilledProcedure(draft, now, model, { sources: procedural.map((section) => section.ref) }) }, 'daily consolidation: distilled from episodes')
      run.distilled.push({ path: pathOf('procedure', slug), description: draft.description })
    }
  }

  // 5. Reconsolidation of what the day's episodes touch (before new facts, which then meet the corrected text).
  const related = [...plan.docs.values()]
    .filter((doc) => doc.existing && isLive(doc))
    .map((doc) => ({ doc, similarity: textSimilarity(allText, `${String(doc.frontmatter.description ?? '')}\n${doc.body}`) }))
    .filter((entry) => entry.similarity >= RELATED_SIMILARITY)
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, RECONSOLIDATION_CHECKS)
  for (const { doc } of related) {
    const answer = await step('reconsolidation', () =>
      llm.generateObject({
        schema: reconsolidationSchema,
        name: 'reconsolidation',
        system: 'You compare an existing memory of an AI agent with new episodes. Update it only when the episodes show it is wrong or out of date (a prediction error); keep everything still true.',
        messages: [
          {
            role: 'user',
            content: `Existing ${doc.kind} (${doc.slug}):\n${doc.body}\n\nNew episodes:\n${numbered(sections)}${resolved.length > 0 ? `\n\nResolved in these episodes:\n${resolved.map((item) => `- ${item}`).join('\n')}` : ''}`,
          },
        ],
      }),
    )
    if (!answer.update || !answer.content?.trim()) continue
    const content = sanitizeFences(answer.content)
    const next = version(doc.frontmatter) + 1
    const frontmatter: Frontmatter = { ...doc.frontmatter, version: next, updated_at: now, reconsolidated: answer.reason.slice(0, 300), method: 'llm', ...(model ? { model } : {}) }
    if (doc.kind === 'procedure') Object.assign(frontmatter, { success_count: 0, failure_count: 0, confidence: 0.5 })
    write(plan, { ...doc, frontmatter, body: `${content}\n` }, `reconsolidation: ${answer.reason}`)
    run.reconsolidated.push({ path: pathOf(doc.kind, doc.slug), version: next, why: answer.reason })
  }

  // 3. Knowledge extraction, with the issues the day resolved.
  const extracted = await step('knowledge extraction', () =>
    llm.generateObject({
      schema: knowledgeSchema,
      name: 'knowledge',
      system: 'You extract durable knowledge from the episodes of an AI agent\'s conversations: facts about people, projects, systems and decisions worth knowing later. Only what the episodes state.',
      messages: [{ role: 'user', content: `${numbered(sections)}${resolved.length > 0 ? `\n\nIssues these episodes resolved (a fact saying one is open is out of date):\n${resolved.map((item) => `- ${item}`).join('\n')}` : ''}` }],
    }),
  )

  for (const item of extracted.items) {
    const sources = [...new Set(item.sources)].map((n) => sections[n - 1]).filter((section): section is EpisodeSource => section !== undefined)
    const cited = sources.length > 0 ? sources : [...sections]
    const sourceText = cited.map((section) => section.text).join('\n\n')
    const content = sanitizeFences(item.content)
    // 4. Validation: the rules first (facts, contradiction, entailment), the model for the rest.
    // The rules read every section the extractor was shown, cited first: a fact cited to the
    // wrong section of the day is still the day's.
    const offline = judgeAgainstEpisodes({ title: item.title, content }, [...cited, ...sections.filter((section) => !cited.includes(section))])
    if (offline.verdict === 'unsupported-facts') {
      run.rejected.push({ title: item.title, why: `states what its sources do not: ${offline.facts.slice(0, 5).join(', ')}`, validation: 'rejected-facts' })
      continue
    }
    if (offline.verdict === 'contradicted') {
      run.rejected.push({ title: item.title, why: `its source says the opposite: "${offline.sentence.slice(0, 200)}"`, validation: 'rejected-contradicted' })
      continue
    }
    const validation = offline.verdict === 'entailed' ? 'entailed' : 'model'
    if (validation === 'model') {
      const check = await step('validation', () =>
        llm.generateObject({
          schema: checkSchema,
          name: 'knowledge_check',
          system: 'You check a fact extracted from episodes against those episodes (premise: the episodes; hypothesis: the fact). Reject anything not stated or directly implied.',
          messages: [{ role: 'user', content: `Episodes:\n${numbered(cited)}\n\nExtracted fact (${item.title}):\n${content}` }],
        }),
      )
      if (!check.supported) {
        run.rejected.push({ title: item.title, why: check.reason, validation: 'rejected-model' })
        continue
      }
    }
    const confidence = validation === 'entailed' ? ENTAILED_CONFIDENCE : LLM_VALIDATED_CONFIDENCE
    // 6. Contradictions with the knowledge most like it.
    const validFrom = cited.map((section) => section.at).sort().at(-1) ?? now
    const similar = docsOf(plan, 'knowledge')
      .filter(isLive)
      .map((doc) => ({ doc, similarity: textSimilarity(`${item.title}\n${content}`, doc.body) }))
      .filter((entry) => entry.similarity >= CONTRADICTION_SIMILARITY)
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, CONTRADICTION_CHECKS)
    let outcome: { kind: 'new' } | { kind: 'known'; doc: PlannedDoc } | { kind: 'supersede' | 'coexist'; doc: PlannedDoc; why: string; condition?: string } | { kind: 'merge'; doc: PlannedDoc; why: string; merged: string } = { kind: 'new' }
    for (const { doc } of similar) {
      const answer = await step('contradiction detection', () =>
        llm.generateObject({
          schema: contradictionSchema,
          name: 'contradiction',
          system: 'You compare a new fact with an existing one from the same memory and say whether they contradict, and how to resolve it.',
          messages: [{ role: 'user', content: `Existing (${doc.slug}, recorded ${String(doc.frontmatter.valid_from ?? doc.frontmatter.created_at ?? 'earlier')}):\n${doc.body}\n\nNew (${validFrom}):\n${content}` }],
        }),
      )
      if (answer.relation === 'duplicate') {
        outcome = { kind: 'known', doc }
        break
      }
      if (answer.relation !== 'contradiction') continue
      const strategy = answer.strategy ?? 'supersede'
      if (strategy === 'merge' && answer.merged?.trim()) {
        // A merged text states only what the two did (the facts check again).
        const merged = sanitizeFences(answer.merged)
        if (unsupportedFacts(merged, `${doc.body}\n${content}\n${sourceText}`).length === 0) {
          outcome = { kind: 'merge', doc, why: answer.reason, merged }
          break
        }
      }
      outcome = { kind: strategy === 'coexist' ? 'coexist' : 'supersede', doc, why: answer.reason, ...(answer.condition ? { condition: answer.condition } : {}) }
      break
    }
    if (outcome.kind === 'known') {
      run.known.push({ title: item.title, path: pathOf('knowledge', outcome.doc.slug) })
      continue
    }
    const slug = slugFor(item.title, new Set(docsOf(plan, 'knowledge').map((doc) => doc.slug)))
    const frontmatter: Frontmatter = {
      created_at: now,
      updated_at: now,
      source_episodes: cited.length,
      confidence,
      auto_consolidated: true,
      version: 1,
      validated: true,
      validation,
      method: 'llm',
      ...(model ? { model } : {}),
      sources: cited.map((section) => section.ref),
      valid_from: validFrom,
    }
    let body = `# ${item.title}\n\n${content}\n`
    let reason = `daily consolidation: extracted from episodes (validation: ${validation})`
    if (outcome.kind === 'supersede') {
      const old = outcome.doc
      frontmatter.supersedes = old.slug
      write(plan, { ...old, frontmatter: { ...old.frontmatter, superseded_by: slug, valid_until: validFrom, updated_at: now } }, `superseded by ${slug}: ${outcome.why}`)
      run.contradictions.push({ strategy: 'supersede', old: pathOf('knowledge', old.slug), new: pathOf('knowledge', slug), why: outcome.why })
    } else if (outcome.kind === 'coexist') {
      const old = outcome.doc
      const condition = outcome.condition ?? outcome.why
      frontmatter.coexists_with = [old.slug]
      frontmatter.coexistence = condition
      const others = Array.isArray(old.frontmatter.coexists_with) ? old.frontmatter.coexists_with : []
      write(plan, { ...old, frontmatter: { ...old.frontmatter, coexists_with: [...others, slug], coexistence: condition, updated_at: now } }, `coexists with ${slug}: ${condition}`)
      run.contradictions.push({ strategy: 'coexist', old: pathOf('knowledge', old.slug), new: pathOf('knowledge', slug), why: outcome.why })
    } else if (outcome.kind === 'merge') {
      const old = outcome.doc
      body = `# ${item.title}\n\n${outcome.merged}\n`
      frontmatter.merged_from = [old.slug]
      frontmatter.valid_from = String(old.frontmatter.valid_from ?? old.frontmatter.created_at ?? validFrom)
      // The text is now the model's merge of the two, not the words the rules found entailed.
      frontmatter.confidence = Math.min(confidence, LLM_VALIDATED_CONFIDENCE)
      reason = `daily consolidation: merged with ${old.slug} (validation: ${validation}): ${outcome.why}`
      write(plan, { ...old, frontmatter: { ...old.frontmatter, merged_into: slug, updated_at: now } }, `merged into ${slug}: ${outcome.why}`)
      plan.merged.push({ kind: 'knowledge', slug: old.slug })
      plan.docs.delete(key('knowledge', old.slug))
      run.contradictions.push({ strategy: 'merge', old: pathOf('knowledge', old.slug), new: pathOf('knowledge', slug), why: outcome.why })
    }
    write(plan, { kind: 'knowledge', slug, existing: false, frontmatter, body }, reason)
    run.learned.push({ path: pathOf('knowledge', slug), title: item.title, confidence: Number(frontmatter.confidence), sources: cited.map((section) => section.ref), validation })
  }
}


/**
 * The unit's plan as it is committed (unit-plan.ts): each document's new text with the record of
 * the change in the owner's own activity log (as forgetting does), the merged documents, and the
 * record of the sections it consolidated, which says the unit is done.
 */
function unitPlanOf(plan: Plan, unit: { day: string; sections: readonly EpisodeSource[]; owner: Owner; agent: string; at: string; model: string | undefined; pathOf: (kind: string, slug: string) => string }): UnitPlan {
  const name = `daily ${unit.day}`
  const changes: PlannedChange[] = [...plan.writes.values()].map(({ doc, reasons }) => {
    const reason = reasons.join('; ').slice(0, 500)
    const path = unit.pathOf(doc.kind, doc.slug)
    return {
      kind: doc.kind,
      slug: doc.slug,
      frontmatter: doc.frontmatter,
      body: doc.body,
      reason,
      activity: { ts: unit.at, type: 'memory_write', content: path, summary: `daily consolidation: ${path} — ${reason}`, meta: { action: 'consolidate', period: 'daily', path, reason, unit: name, ...(unit.model ? { model: unit.model } : {}) } },
    }
  })
  return {
    unit: name,
    at: unit.at,
    changes,
    merged: plan.merged,
    completion: {
      job: EPISODES_CONSOLIDATED,
      agent: unit.agent,
      startedAt: unit.at,
      finishedAt: unit.at,
      status: 'ok',
      // The owner as a digest: job rows are the agent's, and a user's name is theirs.
      details: { unit: name, owner: ownerDigest(unit.owner), day: unit.day, sections: unit.sections.map((section) => section.id), ...(unit.model ? { model: unit.model } : {}) },
    },
  }
}

/** Section ids already consolidated (recorded by earlier runs). */
async function consolidatedSections(backend: Backend, agent: string): Promise<Set<string>> {
  const done = new Set<string>()
  for (const run of await backend.jobs.runs({ job: EPISODES_CONSOLIDATED, agent, limit: 5000 })) {
    const sections = run.details.sections
    if (Array.isArray(sections)) for (const id of sections) if (typeof id === 'string') done.add(id)
  }
  return done
}

const DAY_MS = 86_400_000

/**
 * The model's part of the daily consolidation over every owner's episodes of the backlog window
 * (see the module comment). `includeToday` takes today's sections too (`engram consolidate
 * daily`); the scheduled job takes the days before today.
 */
export async function runKnowledgeConsolidation(deps: KnowledgeConsolidationDeps, options: { dryRun?: boolean; includeToday?: boolean } = {}): Promise<KnowledgeConsolidationRun> {
  const now = deps.clock.now()
  const nowIso = now.toISOString()
  const window = {
    from: isoDay(new Date(now.getTime() - deps.settings.backlogDays * DAY_MS)),
    to: isoDay(options.includeToday ? now : new Date(now.getTime() - DAY_MS)),
  }
  // What a killed run left planned is finished first, before its sections are read as done or not.
  const stuck = options.dryRun ? [] : (await finishUnfinishedUnits(deps.backend)).stuck
  const done = await consolidatedSections(deps.backend, deps.agent)
  const owners = await episodeOwners(deps.backend)
  if (!deps.llm.available) {
    const run = emptyKnowledgeRun()
    run.pending.push(...stuck.map((unit) => stuckStep(unit)))
    let waiting = 0
    for (const owner of owners) waiting += (await episodeSections(deps.backend, owner, window, done)).length
    if (waiting > 0) {
      const reason = `no model configured (llm.provider none): done by the first run with one, over the last ${deps.settings.backlogDays} days of episodes`
      for (const pendingStep of ['knowledge extraction', 'validation', 'procedure distillation', 'reconsolidation', 'contradiction detection'] as const) run.pending.push({ step: pendingStep, reason, waiting })
    }
    return run
  }
  const llm = budgetedLlm(deps.llm, { calls: deps.settings.calls, tokens: deps.settings.tokens })
  const run = emptyKnowledgeRun(llm.model)
  run.pending.push(...stuck.map((unit) => stuckStep(unit)))
  const waiting: Array<{ owner: Owner; sections: EpisodeSource[] }> = []
  for (const owner of owners) {
    if (stuck.some((unit) => unit.owner === owner)) continue
    const sections = await episodeSections(deps.backend, owner, window, done)
    if (sections.length > 0) waiting.push({ owner, sections })
  }
  const total = waiting.reduce((sum, entry) => sum + entry.sections.length, 0)
  try {
    for (const { owner, sections } of waiting) {
      const owned = deps.backend.owned(owner)
      const documents = owned.documents
      const docs = await loadDocs(documents)
      const namespace = ownerNamespace(owner)
      const pathOf = (kind: string, slug: string): string => `${namespace}${kind === 'procedure' ? 'procedures' : 'knowledge'}/${slug}.md`
      for (const day of [...new Set(sections.map((section) => section.day))]) {
        const unit = sections.filter((section) => section.day === day)
        const plan: Plan = { docs, writes: new Map(), merged: [] }
        const draft = emptyKnowledgeRun(llm.model)
        // Every model call of the unit first; a failure throws before anything is written.
        await planUnit(llm, plan, unit, nowIso, draft, pathOf)
        // Written as one unit: a crash leaves none of it or a plan the next run finishes (unit-plan.ts).
        if (!options.dryRun) await commitUnit(deps.backend, owner, unitPlanOf(plan, { day, sections: unit, owner, agent: deps.agent, at: nowIso, model: llm.model, pathOf }))
        for (const planned of plan.writes.values()) planned.doc.existing = true
        run.sections += unit.length
        for (const field of ['learned', 'rejected', 'known', 'distilled', 'similarProcedures', 'reconsolidated', 'contradictions'] as const) (run[field] as unknown[]).push(...draft[field])
      }
    }
  } catch (error) {
    if (!(error instanceof BudgetExhausted)) throw error
    run.pending.push({ step: 'knowledge extraction', reason: error.message, waiting: total - run.sections })
  }
  const used = llm.used()
  run.calls = used.calls
  run.tokens = used.tokens
  return run
}

