/**
 * `engram skills list | show LABEL | remove LABEL | save [NAME…] [--from FILE.md] [--name N]`:
 * the skill library (procedural memory) from the command line.
 */
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { MindInternals } from '../../../../mind-internals.ts'
import { closestLabel } from '../../../../memory/skills/labels.ts'
import type { Skill } from '../../../../memory/skills/skill.ts'
import { DEFAULT_DRAFT_EVENTS, draftSkillFromActivity, draftSkillFromMarkdown } from '../../../../memory/skills/skill-drafter.ts'
import { createSkillStore, notFound, type SkillStore } from '../../../../memory/skills/skill-store.ts'
import type { Command, CommandContext } from '../../command.ts'
import { withMind } from '../../open-mind.ts'

/** The skill library of an open mind. */
export function skillStoreOf(mind: MindInternals): SkillStore {
  return createSkillStore({ dir: mind.layout.skillsDir, clock: mind.clock, locks: mind.backend.locks, archiveDir: `${mind.layout.archiveDir}/skills`, maxFileBytes: mind.config.values.memory.maxFileBytes })
}

function withSkills<T>(context: CommandContext, fn: (store: SkillStore, mind: MindInternals) => Promise<T>): Promise<T> {
  return withMind(context, (mind) => fn(skillStoreOf(mind), mind), { reindexOnOpen: false })
}

function counters(skill: Skill): string {
  return [1, 2, 3].map((n) => {
    const stage = skill.stats[`stage_${n}` as 'stage_1']
    return `s${n} ${stage.recommended}/${stage.used}`
  }).join('  ')
}

function summaryOf(skill: Skill): Record<string, unknown> {
  return {
    label: skill.label,
    name: skill.meta.name,
    when_to_use: skill.meta.when_to_use,
    stats: { stage_1: skill.stats.stage_1, stage_2: skill.stats.stage_2, stage_3: skill.stats.stage_3 },
    has_chunks: skill.meta.has_chunks,
    has_code: skill.meta.has_code,
    updated_at: skill.meta.updated_at,
  }
}

function requireLabel(context: CommandContext, verb: string): string {
  const label = context.args[0]
  if (!label) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `engram skills ${verb} needs a skill label.`,
      fix: `run \`engram skills ${verb} LABEL\`; \`engram skills list\` shows the labels`,
    })
  }
  return label
}

const listRun: Command['run'] = (context) =>
  withSkills(context, async (store) => {
    const { skills, problems } = await store.list()
    const lines =
      skills.length === 0
        ? ['no skills saved yet (save one with `engram skills save`)']
        : [`${skills.length} skill(s) — counters are recommended/used per stage`, ...skills.map((s) => `  ${s.label.padEnd(24)} ${counters(s)}  ${s.meta.when_to_use}`)]
    for (const problem of problems) lines.push(`  unreadable skill folder ${problem.dir}: ${problem.reason}`)
    return { data: { skills: skills.map(summaryOf), problems }, human: lines.join('\n') }
  })

export const skillsCommand: Command = {
  path: ['skills'],
  examples: ['engram skills'],
  run: listRun,
}

export const skillsListCommand: Command = {
  path: ['skills', 'list'],
  examples: ['engram skills list', 'engram skills list --json'],
  run: listRun,
}

export const skillsShowCommand: Command = {
  path: ['skills', 'show'],
  usage: 'LABEL',
  examples: ['engram skills show csv_summary'],
  run: (context) =>
    withSkills(context, async (store) => {
      const requested = requireLabel(context, 'show')
      let skill = await store.load(requested)
      let resolvedFrom: string | undefined
      if (!skill) {
        const close = await store.closestMatch(requested)
        if (close) skill = await store.load(close.label)
        if (!skill) throw notFound(requested, await store.labels())
        resolvedFrom = requested
      }
      const human = [
        ...(resolvedFrom ? [`(no skill "${resolvedFrom}"; showing the closest, "${skill.label}")`] : []),
        `${skill.meta.name} (${skill.label})`,
        `when to use: ${skill.meta.when_to_use}`,
        `counters:    ${counters(skill)}  (recommended/used per stage)`,
        `folder:      ${skill.dir}`,
        '',
        skill.declarative.trim(),
        ...(skill.chunks?.trim() ? ['', '## Recipes (stage 2)', skill.chunks.trim()] : []),
        ...(skill.codeFiles.length > 0 ? ['', '## Code (stage 3)', ...skill.codeFiles.map((f) => `- ${f}`)] : []),
      ].join('\n')
      return {
        data: { ...summaryOf(skill), ...(resolvedFrom ? { resolvedFrom } : {}), declarative: skill.declarative, chunks: skill.chunks, codeFiles: skill.codeFiles, provenance: skill.meta.provenance, dir: skill.dir },
        human,
      }
    }),
}

export const skillsRemoveCommand: Command = {
  path: ['skills', 'remove'],
  usage: 'LABEL',
  examples: ['engram skills remove csv_summary'],
  run: (context) =>
    withSkills(context, async (store) => {
      const label = requireLabel(context, 'remove')
      const skill = await store.load(label)
      if (!skill) {
        // Removing is never typo-tolerant: a near miss names the candidate but removes nothing.
        const labels = await store.labels()
        const close = closestLabel(label, labels)
        const error = notFound(label, labels)
        if (!close) throw error
        throw new EngramError({ code: error.code, category: 'user', message: error.message, fix: `did you mean \`engram skills remove ${close.label}\`?`, details: error.details })
      }
      const archivedTo = await store.delete(label)
      return { data: { label, archivedTo }, human: `removed skill ${label} (moved to ${archivedTo})` }
    }),
}

export const skillsSaveCommand: Command = {
  path: ['skills', 'save'],
  usage: '[NAME HINT…] [--from FILE.md] [--name NAME] [--events N] [--user ID]',
  examples: ['engram skills save --from ./deploy.md', 'engram skills save summarise csv files --name csv_summary'],
  home: 'creates',
  options: {
    from: { type: 'string', description: 'markdown file with the procedure and a "When to use:" line', valueName: 'FILE.md' },
    name: { type: 'string', description: 'the skill name (the label is derived from it)', valueName: 'NAME' },
    events: { type: 'string', description: `recent activity events the LLM reads (default ${DEFAULT_DRAFT_EVENTS})`, valueName: 'N' },
  },
  run: (context) =>
    withSkills(context, async (store, mind) => {
      const nameOption = typeof context.options.name === 'string' ? context.options.name : undefined
      const hint = nameOption ?? (context.args.length > 0 ? context.args.join(' ') : undefined)
      const from = typeof context.options.from === 'string' ? context.options.from : undefined
      let events = DEFAULT_DRAFT_EVENTS
      if (typeof context.options.events === 'string') {
        events = Number(context.options.events)
        if (!Number.isInteger(events) || events < 1 || events > 1000) {
          throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `--events must be a whole number from 1 to 1000, got "${context.options.events}".`, fix: 'pass e.g. --events 50' })
        }
      }

      let draft: Awaited<ReturnType<typeof draftSkillFromActivity>>
      let provenance: Record<string, unknown> & { source: string }
      if (from) {
        const path = resolve(context.io.cwd, from)
        let text: string
        try {
          text = await readFile(path, 'utf8')
        } catch (error) {
          throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `Cannot read ${path}: ${(error as Error).message}`, fix: 'pass an existing markdown file to --from', cause: error })
        }
        draft = draftSkillFromMarkdown(text, { fileName: from, ...(hint !== undefined ? { name: hint } : {}) })
        provenance = { source: 'user', file: path }
      } else {
        // With --user, the work done with that user: their sessions' activity is logged in their tree
        // (decision 0017). Saving it as a skill is the operator's explicit promotion (decision 0045).
        const user = typeof context.options.user === 'string' && context.options.user !== '' ? context.options.user : undefined
        const activity = user === undefined ? mind.backend.activity : mind.scope(user).view.own.activity
        draft = await draftSkillFromActivity({ llm: mind.llm, activity, events, ...(hint !== undefined ? { nameHint: hint } : {}) })
        provenance = { source: 'llm', model: mind.llm.modelFor('planning') ?? mind.llm.provider, events, ...(user !== undefined ? { user } : {}) }
      }
      const label = await store.makeUniqueLabel(draft.label)
      const skill = await store.save({ label, name: draft.name, whenToUse: draft.whenToUse, declarative: draft.declarative, provenance })
      return {
        data: summaryOf(skill),
        human: [`saved skill ${skill.label} → ${skill.dir}`, `name: ${skill.meta.name}`, `when to use: ${skill.meta.when_to_use}`].join('\n'),
      }
    }),
}

/** The skills commands, for the lead to register in COMMANDS. */
