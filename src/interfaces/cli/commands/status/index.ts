import { type CountKey, inListingOrder, memoryKinds } from '../../../../core/memory-kinds.ts'
import type { Command } from '../../command.ts'
import { colourFor, makeStyle, table } from '../../format.ts'
import { withMindCore } from '../../open-mind.ts'
import type { MindStatus, ScopeCounts } from '../../../../memory/status.ts'
import { describeLanguages } from '../../../../memory/language-sample.ts'
import type { OwnersStatus } from '../../../../storage/owner-counts.ts'

export const statusCommand: Command = {
  path: ['status'],
  examples: ['engram status', 'engram status --json --home ~/agents/engram'],
  // The counts and capabilities need the opened home (and its reindex of hand edits), not the memory systems (decision 0041).
  async run(context) {
    return withMindCore(context, async (core) => {
      const status = await core.status()
      return { data: status, human: renderStatus(status, colourFor(context.io)) }
    })
  },
}

/** Queued work: what waits, what backs off before its next attempt, what failed for good, when consolidation last ran. */
function workRows(jobs: MindStatus['jobs'], s: ReturnType<typeof makeStyle>): Array<[string, string]> {
  const rows: Array<[string, string]> = [['queued jobs', `${jobs.queued}${jobs.running > 0 ? ` (${jobs.running} running)` : ''}`]]
  for (const job of jobs.retrying) rows.push([`retrying ${job.kind}`, s.yellow(`attempt ${job.attempts} of ${job.maxAttempts} failed; next not before ${job.nextAttempt}${job.error ? ` — ${job.error}` : ''}`)])
  for (const job of jobs.failed) rows.push([`failed ${job.kind}`, s.red(`after ${job.attempts} attempt(s)${job.at ? ` at ${job.at}` : ''}${job.error ? ` — ${job.error}` : ''}`)])
  for (const [kind, run] of Object.entries(jobs.consolidation)) rows.push([kind, `${run.status}${run.at ? ` at ${run.at}` : ''}${run.reason ? ` (${run.reason})` : ''}`])
  return rows
}

/** A row per kind counted in status (core/memory-kinds.ts), with skills and activity days, in the order status has always shown them. */
function countRows(m: MindStatus['memory']): Array<[string, string]> {
  const rows = new Map<string, string>([
    ...memoryKinds().flatMap(([, spec]) => (spec.count?.in.includes('status') ? [[spec.count.label, String(m[spec.count.key as CountKey<'status'>])] as const] : [])),
    ['skills', String(m.skills)],
    ['activity days', String(m.activityDays)],
  ])
  return inListingOrder(['knowledge', 'procedures', 'skills', 'episode days', 'user profiles', 'activity days'], [...rows.keys()]).map((label) => [label, rows.get(label) as string])
}

export function renderStatus(status: MindStatus, colour: boolean): string {
  const s = makeStyle(colour)
  const scope = (name: string, counts: MindStatus['memory']['global'] | undefined): Array<[string, string]> =>
    counts
      ? [
          [`${name} rules`, `${counts.rules.always} always, ${counts.rules.never} never, ${counts.rules.when} when`],
          [`${name} lessons`, String(counts.lessons)],
          [`${name} topics`, String(counts.topics)],
        ]
      : []
  const m = status.memory
  const caps = status.capabilities
  const lines = [
    s.bold(`engram — agent "${status.agent}" in ${status.home}`),
    '',
    s.bold('Memory'),
    table([
      ['profile facts', String(m.global.profile)],
      ...scope('global', m.global),
      ...scope('project', m.project),
      ...countRows(m),
      ['conversations', `${status.context.conversations} (${status.context.messages} messages)`],
      ['index units', String(status.index.units)],
      ['awaiting confirmation', status.pendingConfirmations === 0 ? '0' : s.yellow(`${status.pendingConfirmations} (engram confirm)`)],
    ]),
    '',
    s.bold('Memory by owner'),
    table(byOwnerRows(m)),
    ...(status.owners ? ['', s.bold('Owners'), table(ownerRows(status.owners))] : []),
    ...(Object.keys(status.legacyMigration).length > 0
      ? ['', s.bold('Legacy layout migrated on open (context/, learnings/; the old files kept)'), table(Object.entries(status.legacyMigration).map(([root, record]) => [root, record.status === 'done' ? `${record.lessons ?? 0} lessons (${record.duplicates ?? 0} already there), ${record.at}` : s.yellow(`started ${record.at}; the next open finishes it`)]))]
      : []),
    '',
    s.bold('Work'),
    table(workRows(status.jobs, s)),
    '',
    s.bold('Capabilities'),
    table([
      ['storage', `${caps.backend} (${caps.storage})`],
      ['full-text search', caps.fullText ? s.green(`yes (${caps.fullTextRanking})`) : s.red('no')],
      ['vector search', caps.vectors ? s.green(String(caps.vectors)) : s.yellow(caps.vectorsOff !== undefined ? `off — ${caps.vectorsOff}; memories are indexed and searched by their words` : 'off')],
      ['embedder', caps.embedder ? `${caps.embedder.id} (${caps.embedder.kind})` : s.yellow('none')],
      ['LLM', caps.llm.available ? `${caps.llm.provider} (${caps.llm.planningModel ?? '?'})` : s.yellow('none — offline paths, output marked as such')],
      ['memory mode', caps.memoryMode],
      ['languages', describeLanguages(status.languages)],
    ]),
  ]
  if (status.problems.length > 0) {
    lines.push('', s.yellow(`Unreadable files and lines, skipped and kept as they are (${status.problems.length}):`))
    for (const p of status.problems.slice(0, 10)) lines.push(p.line === 0 ? `  ${p.file}  ${p.reason}` : `  ${p.file}:${p.line}  ${p.reason}: ${JSON.stringify(p.text.slice(0, 80))}`)
    if (status.problems.length > 10) lines.push(`  … and ${status.problems.length - 10} more (engram status --json lists all)`)
  }
  return lines.join('\n')
}

/** One row per owner of what their tree holds, the counts that are not zero (the totals above add them up). */
function byOwnerRows(m: MindStatus['memory']): Array<[string, string]> {
  const treeKinds = memoryKinds().flatMap(([, spec]) => (spec.home === 'tree' && spec.count?.in.includes('status') ? [spec.count] : []))
  const rows: Array<[string, string]> = m.byOwner.map((counts) => {
    const rules = (scope: ScopeCounts | undefined): number => (scope ? scope.rules.always + scope.rules.never + scope.rules.when : 0)
    const parts: Array<[number, string]> = [
      [rules(counts.global) + rules(counts.project), 'rules'],
      [counts.global.lessons + (counts.project?.lessons ?? 0), 'lessons'],
      [counts.global.profile + (counts.project?.profile ?? 0), 'profile facts'],
      [counts.global.topics + (counts.project?.topics ?? 0), 'topics'],
      ...treeKinds.map((count): [number, string] => [counts[count.key as CountKey<'status'>] ?? 0, count.label]),
      [counts.activityDays, 'activity days'],
    ]
    // The labels are plurals ("procedures", "episode days"): one of them drops its final s.
    const shown = parts.filter(([n]) => n > 0).map(([n, label]) => `${n} ${n === 1 && label.endsWith('s') ? label.slice(0, -1) : label}`)
    return [counts.owner.startsWith('user:') ? `user ${counts.owner.slice(5)}` : counts.owner, shown.length > 0 ? shown.join(', ') : 'nothing yet']
  })
  return rows
}

/** Units and files per owner, then what the migration of a home written before owners assigned. */
function ownerRows(owners: OwnersStatus): Array<[string, string]> {
  const counts = (c: { units: number; files: number }): string => `${c.units} index units, ${c.files} files`
  const rows: Array<[string, string]> = [
    ['agent', counts(owners.agent)],
    ['shared', counts(owners.shared)],
    [`users (${owners.users.count})`, counts(owners.users)],
  ]
  for (const user of owners.users.list.slice(0, 10)) rows.push([`  ${user.user}`, counts(user)])
  if (owners.users.count > 10) rows.push(['', `… and ${owners.users.count - 10} more (engram status --json lists ${owners.users.list.length})`])
  const m = owners.migration
  if (!m) {
    rows.push(['migration', 'not run yet'])
    return rows
  }
  const moved = m.notes.moved + m.activity.moved + m.episodes.moved + m.resolutions.assigned
  rows.push([
    'migration',
    moved === 0
      ? `${m.at.slice(0, 10)}: nothing written before owners to move; ${m.index.userUnits} index units owned by ${m.index.users} users`
      : `${m.at.slice(0, 10)}: ${m.index.userUnits} index units owned by ${m.index.users} users from their conversations; ${m.notes.moved} notes into ${m.notes.users.length} profiles; ${m.activity.moved} activity events and ${m.episodes.moved} episode sections into users' trees; ${m.resolutions.assigned} resolutions given their user`,
  ])
  for (const kept of m.notes.kept) rows.push(['', `notes of ${kept.user} (agent ${kept.agent}) left in ctx_agent_memory: ${kept.reason}`])
  return rows
}
