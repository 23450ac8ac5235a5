import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Command } from '../../command.ts'
import { colourFor, makeStyle } from '../../format.ts'
import { missingHome } from '../../home-check.ts'
import { ExitCode } from '../../io.ts'
import { openMind } from '../../open-mind.ts'
import { describeError, EngramError } from '../../../../core/errors.ts'
import { MINIMUM_NODE_VERSION } from '../../../../core/node-version.ts'
import { probeEmbedder, probeLlm } from '../../../../llm/probe.ts'
import type { MindInternals } from '../../../../mind-internals.ts'
import { FAILURE_LOOKBACK_MS, formatFailureGroup, groupFailures, readFailures } from '../../../../memory/failures.ts'
import { checkContextConsistency } from '../../../../memory/context/consistency.ts'
import { describeLanguages, sampleLanguages } from '../../../../memory/language-sample.ts'

export interface DoctorCheck {
  name: string
  status: 'ok' | 'warn' | 'fail'
  detail: string
  fix?: string
}

export const doctorCommand: Command = {
  path: ['doctor'],
  examples: ['engram doctor', 'engram doctor --json'],
  home: 'checks',
  async run(context) {
    const checks: DoctorCheck[] = []
    // No command runs on an older Node: runCli refuses it first (decision 0068).
    checks.push({ name: 'node', status: 'ok', detail: `Node ${process.version} (engram needs ${MINIMUM_NODE_VERSION} or newer)` })

    let mind: Awaited<ReturnType<typeof openMind>> | undefined
    try {
      // Opening a home that is not there would create it: said as the failed check it is.
      const noHome = missingHome(context.io, context.settings)
      if (noHome) {
        checks.push({ name: 'home', status: 'fail', detail: noHome.message, ...(noHome.fix ? { fix: noHome.fix } : {}) })
      } else {
        mind = await openMind(context, { reindexOnOpen: false })
        checks.push({ name: 'config', status: 'ok', detail: mind.config.file ? `read ${mind.config.file}` : 'defaults and environment (no config.json)' })
      }
    } catch (error) {
      checks.push({
        name: 'config',
        status: 'fail',
        detail: describeError(error),
        fix: EngramError.is(error) ? (error.fix ?? 'see the problems above') : 'see the message above',
      })
    }

    if (mind) {
      try {
        const probe = join(mind.home, `.doctor-${process.pid}`)
        writeFileSync(probe, 'ok')
        rmSync(probe)
        checks.push({ name: 'home', status: 'ok', detail: `${mind.home} is writable` })
      } catch (error) {
        checks.push({ name: 'home', status: 'fail', detail: describeError(error), fix: 'give the user write access to the home, or pick another with --home / ENGRAM_HOME' })
      }
      // The backend's own checks: its server and extensions, as it found them on open.
      checks.push(...mind.backend.capabilities.checks)
      checks.push(
        mind.backend.capabilities.fullText
          ? { name: 'full-text search', status: 'ok', detail: mind.backend.capabilities.describe.fullText }
          : { name: 'full-text search', status: 'fail', detail: 'this SQLite has no FTS5', fix: 'use Node 22.13+ whose built-in SQLite includes FTS5' },
      )
      const vectors = mind.backend.capabilities.vectors
      checks.push(
        vectors === 'sqlite-vec' || vectors === 'pgvector'
          ? { name: 'vector search', status: 'ok', detail: vectors }
          : vectors === 'typescript'
            ? { name: 'vector search', status: 'warn', detail: 'sqlite-vec not loadable; vectors searched in plain TypeScript (slower past ~100k units)', fix: 'reinstall engram so that the sqlite-vec package for this platform is present' }
            : mind.backend.capabilities.vectorsOff !== undefined
              ? { name: 'vector search', status: 'warn', detail: `off: ${mind.backend.capabilities.vectorsOff}`, fix: 'see the pgvector check above' }
              : { name: 'vector search', status: 'warn', detail: 'off', fix: 'set ENGRAM_EMBED_PROVIDER to offline, openai-compatible or onnx' },
      )
      // Informational: which languages get more than their words (decision 0076).
      const units = Object.values(await mind.backend.index.count()).reduce((a, b) => a + b, 0)
      checks.push({ name: 'languages', status: 'ok', detail: describeLanguages(await sampleLanguages(mind.backend.index, units)) })
      checks.push(await contextCheck(mind))
      checks.push(await memoryFilesCheck(mind))
      // Read before the probes below, which record their own failure (the checks after them show it).
      checks.push(...(await recentFailureChecks(mind)))
      const llm = await probeLlm(mind.llm)
      checks.push(
        llm.ok
          ? { name: 'llm', status: 'ok', detail: llm.detail }
          : { name: 'llm', status: mind.llm.available ? 'fail' : 'warn', detail: llm.detail, fix: llm.fix },
      )
      const embed = await probeEmbedder(mind.embedder)
      checks.push(
        embed.ok
          ? { name: 'embedder', status: 'ok', detail: embed.detail }
          : { name: 'embedder', status: mind.embedder ? 'fail' : 'warn', detail: embed.detail, fix: embed.fix },
      )
      await mind.close()
    }

    const healthy = checks.every((c) => c.status !== 'fail')
    const s = makeStyle(colourFor(context.io))
    const mark = { ok: s.green('ok  '), warn: s.yellow('warn'), fail: s.red('FAIL') }
    const human = [
      ...checks.map((c) => `${mark[c.status]}  ${c.name.padEnd(17)} ${c.detail}${c.fix && c.status !== 'ok' ? `\n      ${' '.repeat(17)} fix: ${c.fix}` : ''}`),
      '',
      healthy ? 'engram is ready.' : 'engram cannot work until the failures above are fixed.',
    ].join('\n')
    return { data: { healthy, checks }, human, exitCode: healthy ? ExitCode.ok : ExitCode.unhealthy }
  },
}

/*
 * The newest conversations are the ones compaction is still folding; checking every conversation
 * of a large home would make the doctor as slow as its whole history. 20 keep it under a second.
 */
const CHECKED_CONVERSATIONS = 20

/** The agent's newest conversations still stand for every stored message exactly once (DESIGN §1.3). */
async function contextCheck(mind: MindInternals): Promise<DoctorCheck> {
  const conversations = (await mind.backend.context.listConversations(mind.agent)).slice(-CHECKED_CONVERSATIONS)
  if (conversations.length === 0) return { name: 'context', status: 'ok', detail: 'no conversations yet' }
  const broken: string[] = []
  for (const conversation of conversations) {
    const report = await checkContextConsistency(mind.backend.context, conversation.id)
    if (!report.ok) broken.push(`${conversation.sessionId}: ${report.problems[0]}${report.problems.length > 1 ? ` (+${report.problems.length - 1} more)` : ''}`)
  }
  const what = `${conversations.length} newest conversation${conversations.length === 1 ? '' : 's'}`
  if (broken.length === 0) return { name: 'context', status: 'ok', detail: `${what}: every message covered exactly once` }
  return {
    name: 'context',
    status: 'fail',
    detail: `${broken.length} of the ${what} are not consistent: ${broken.slice(0, 3).join('; ')}`,
    fix: 'every message is still stored; run engram context stats --session <id> for the details and report it as a bug with that output',
  }
}

/**
 * Every memory file of every owner's tree read once (the reindex a mind does when it opens): what
 * it skipped — unreadable lines, folders and pipes at memory names, links leading out of their
 * folder, files over the size limit — is kept as it is, and listed here (decision 0025).
 */
async function memoryFilesCheck(mind: MindInternals): Promise<DoctorCheck> {
  let problems: Awaited<ReturnType<MindInternals['reindex']>>['problems']
  let sources: number
  try {
    const report = await mind.reindex()
    problems = report.problems
    sources = report.sources
  } catch (error) {
    return { name: 'memory files', status: 'fail', detail: `the memory files could not be indexed: ${describeError(error)}`, fix: 'run engram reindex for the details and report it as a bug with that output' }
  }
  if (problems.length === 0) return { name: 'memory files', status: 'ok', detail: `${sources} files read, every line readable` }
  const shown = problems.slice(0, 3).map((p) => (p.line === 0 ? `${p.file} (${p.reason})` : `${p.file}:${p.line} (${p.reason})`))
  return {
    name: 'memory files',
    status: 'warn',
    detail: `${problems.length} skipped and kept as they are: ${shown.join('; ')}${problems.length > 3 ? `; and ${problems.length - 3} more` : ''}`,
    fix: 'edit, move or remove them (engram status --json lists all); a file over the size limit can be split, or the limit raised with ENGRAM_MEMORY_MAX_FILE_BYTES',
  }
}

/**
 * LLM and embedder calls that failed in the last 24 hours, in any process (background work falls
 * back to its offline path without failing anything, so this is where a wrong key shows up).
 */
async function recentFailureChecks(mind: MindInternals): Promise<DoctorCheck[]> {
  const since = new Date(mind.clock.now().getTime() - FAILURE_LOOKBACK_MS).toISOString()
  const groups = groupFailures(await readFailures([mind.backend.activity], { since }))
  if (groups.length === 0) return [{ name: 'model failures', status: 'ok', detail: 'no LLM or embedder call failed in the last 24 hours' }]
  return groups.map((group) => ({ name: `${group.source} failures`, status: 'warn', detail: formatFailureGroup(group, { fix: false }), fix: group.fix }))
}
