/**
 * `engram migrate --to URL|DIR`: moves every agent of the current embedded home into another
 * backend — a PostgreSQL database (`postgres://…`) or another embedded home (a folder) — through
 * the storage seams (decision 0036): the memory tree and its archive (forgotten and merged
 * documents, earlier versions, forgotten memories), conversations with their summaries and
 * context items, the activity log, confirmations, stored turns and job runs, then a full reindex
 * of the target and the access counts of what it indexed, which is then checked against the source: "complete", or "incomplete" with what
 * differs and ExitCode.incomplete (decision 0052). The source is only read; running it again adds
 * nothing that is already there and finishes what a killed run left.
 */
import { resolve } from 'node:path'
import { createLineLogger } from '../../../../core/logger.ts'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { ProgressOptions } from '../../../../core/progress.ts'
import { reindexFiles } from '../../../../memory/retrieval/indexer.ts'
import { type MigrationReport, migrateBackend } from '../../../../memory/portability/migrate-backend.ts'
import { listAgents } from '../../../../mind.ts'
import { openMindInternals, type MindInternals } from '../../../../mind-internals.ts'
import { backendEntryFor, schemeOf } from '../../../../storage/backends.ts'
import type { Backend } from '../../../../storage/contracts.ts'
import type { Command, CommandContext } from '../../command.ts'
import { ExitCode } from '../../io.ts'
import { withProgress } from '../../progress.ts'

function open(context: CommandContext, settings: Record<string, unknown>): Promise<MindInternals> {
  const stderr = context.io.stderr
  const logger = createLineLogger({ level: 'debug', write: (line) => stderr.write(line), format: context.io.isTTY ? 'text' : 'json' })
  return openMindInternals({ env: context.io.env, settings: { ...context.settings, ...settings }, reindexOnOpen: false, logger })
}

/** The target of one agent's migration: its backend, where skills go, and how it is reindexed. */
interface Target {
  backend: Backend
  skills?: MindInternals['skills']
  reindex(progress: ProgressOptions): Promise<unknown>
  close(): Promise<void>
}

async function openTarget(context: CommandContext, to: string, source: MindInternals): Promise<Target> {
  // A URL picks its backend from the table (storage/backends.ts); a folder is an embedded home.
  if (schemeOf(to) !== undefined) {
    const entry = backendEntryFor(to)
    if (to === source.config.values.storage.url) {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'The target is the database this mind already runs on (storage.url).', fix: 'Pass another database to --to, or unset ENGRAM_DATABASE_URL to migrate the embedded home.' })
    }
    // The schema the configuration names (storage.schema), when this configuration has one.
    const schema = (source.config.values.storage as { schema?: unknown }).schema
    const backend = await entry.open({
      url: to,
      ...(typeof schema === 'string' ? { schema } : {}),
      home: source.home,
      agent: source.agent,
      ...(source.project !== undefined ? { project: source.project } : {}),
      clock: source.clock,
      ...(source.embedder ? { embedderId: source.embedder.id, dimensions: source.embedder.dimensions } : {}),
      maxFileBytes: source.config.values.memory.maxFileBytes,
    })
    // Skills stay files of the home on a database (decision 0037): the home's own skill store indexes them.
    return {
      backend,
      reindex: (progress) => reindexFiles({ backend, embedder: source.embedder, clock: source.clock, agent: source.agent, skills: source.skills }, { full: true, ...progress }),
      close: () => backend.close(),
    }
  }
  const home = resolve(context.io.cwd, to)
  if (home === resolve(source.home)) {
    throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `${home} is the home being migrated.`, fix: 'Pass another home folder, or a postgres://… URL, to --to.' })
  }
  // A folder is an embedded home whatever database the source runs on (ENGRAM_DATABASE_URL would open that database again).
  const { ENGRAM_DATABASE_URL: _url, ENGRAM_DATABASE_SCHEMA: _schema, ...env } = context.io.env
  const target = await open({ ...context, io: { ...context.io, env } }, { home, agent: source.agent })
  return { backend: target.backend, skills: target.skills, reindex: (progress) => target.reindex({ full: true, ...progress }), close: () => target.close() }
}

/** The target as it is shown: a URL without its credentials. */
function shownTarget(to: string): string {
  return to.replace(/\/\/[^@/]*@/, '//…@')
}

function describeMigration(to: string, reports: MigrationReport[], status: MigrationReport['status']): string {
  const where = shownTarget(to)
  const lines = [
    status === 'complete'
      ? `Migrated ${reports.length} agent(s) to ${where}: done, checked: the target holds everything of the source a migration carries.`
      : `Migration to ${where} is INCOMPLETE: the target does not hold all of the source. Run the same command again to resume; what differs is listed below.`,
  ]
  for (const r of reports) {
    lines.push(
      `  ${r.agent}: ${r.memory.entries + r.memory.topicEntries} entries, ${r.memory.documents} document(s), ${r.memory.skills} skill(s); ${r.archive.documents} archived document(s) or earlier version(s), ${r.archive.forgotten} file(s) of forgotten memory; access counts of ${r.access.units} memory unit(s); ${r.conversations.moved} conversation(s) with ${r.conversations.messages} message(s) and ${r.conversations.summaries} summar${r.conversations.summaries === 1 ? 'y' : 'ies'}; ${r.activity.events} activity event(s); ${r.confirmations.pending + r.confirmations.decided} confirmation(s); ${r.turns.moved} turn(s); ${r.jobRuns.moved} job run(s); ${r.queuedJobs.moved} waiting job(s)`,
    )
    for (const problem of r.problems) lines.push(`    not moved: ${problem.path}${problem.line ? `:${problem.line}` : ''} — ${problem.reason}`)
    for (const difference of r.verification.differences) lines.push(`    differs: ${difference.what} — source ${difference.source}, target ${difference.target}`)
  }
  if (reports[0]) lines.push('Not carried by a migration yet:', ...reports[0].notMoved.map((item) => `  - ${item}`))
  return lines.join('\n')
}

export const migrateCommand: Command = {
  path: ['migrate'],
  usage: '--to postgres://USER@HOST/DB|DIR',
  examples: ['engram migrate --to postgres://engram@db.internal/engram', 'engram migrate --to ~/engram-copy'],
  options: {
    to: { type: 'string', description: 'where to: a postgres:// or postgresql:// URL, or the folder of another engram home', valueName: 'URL|DIR' },
  },
  async run(context) {
    const to = typeof context.options.to === 'string' ? context.options.to.trim() : ''
    if (to === '') {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'engram migrate needs a target (--to).', fix: 'write e.g. `engram migrate --to postgres://engram@db.internal/engram` or `engram migrate --to ./other-home`' })
    }
    const first = await open(context, {})
    const agents = listAgents(first.home)
    await first.close()
    // A migration resumes whatever an earlier run left (decision 0052): stopped, it is finished by running it again.
    // The command to run again, as given but for a password in the URL.
    const again = to.replace(/(\/\/[^:@/]*):[^@/]*@/, '$1:…@')
    const resume = `What was moved so far stays in the target. Run \`engram migrate --to ${again}\` again to finish: it adds nothing that is already there.`
    return withProgress(context, { command: 'migrate', resume }, async (progress) => {
      const reports: MigrationReport[] = []
      for (const agent of agents.length > 0 ? agents : [first.agent]) {
        const source = await open(context, { agent })
        try {
          const target = await openTarget(context, to, source)
          try {
            reports.push(
              await migrateBackend({
                from: source.backend,
                to: target.backend,
                agent,
                ...(target.skills ? { skills: { from: source.skills, to: target.skills } } : {}),
                reindex: (reindexProgress) => target.reindex(reindexProgress),
                progress,
              }),
            )
          } finally {
            await target.close()
          }
        } finally {
          await source.close()
        }
      }
      // "done" only when every agent's target was read back and holds all of its source (decision 0052).
      const status = reports.every((report) => report.status === 'complete') ? 'complete' : 'incomplete'
      return {
        data: { to: shownTarget(to), status, agents: reports },
        human: describeMigration(to, reports, status),
        ...(status === 'complete' ? {} : { exitCode: ExitCode.incomplete }),
      }
    })
  },
}
