/**
 * The consolidation kill trials on PostgreSQL (decision 0053), where documents,
 * their versions, archived copies and activity records are rows. A schema cannot be copied, so
 * each trial builds the scenario's home afresh in a schema of its own (the fixed clock and the
 * fake model make every build alike); the unkilled run and the recovered ones are compared row
 * for row through the stores (`storeRows`): every document of every owner with its text, every
 * saved version and archived copy with its text, and every activity record — all but the rows'
 * ids and the index, which depend on the process history.
 */
import { join } from 'node:path'
import { ManualClock } from '../../../core/clock.ts'
import { serializeFrontmatter } from '../../../core/frontmatter.ts'
import { DOC_KINDS } from '../../../core/memory-doc.ts'
import { type Owner, ownerOfUser } from '../../../core/owner.ts'
import { createMind } from '../../../mind.ts'
import { freshSchema } from '../../../storage/postgres/test-support/test-database.ts'
import { buildHome, CONSOLIDATED_AT, compareTrees, type KillPoint, type KillTrial, runChild } from './consolidation-kills.ts'
import { seededRandom } from '../../../testing/seeded-random.ts'

/** What the home's stores hold, one entry per row (documents, versions, archived copies, activity), with its text. */
export async function storeRows(home: string, env: Record<string, string>): Promise<Map<string, Buffer>> {
  const mind = await createMind({ home, env, ignoreConfigFile: true, clock: new ManualClock(CONSOLIDATED_AT), settings: { 'llm.provider': 'none', 'jobs.eager': false }, reindexOnOpen: false })
  const rows = new Map<string, Buffer>()
  try {
    const owners: Owner[] = ['agent', 'shared', ...(await mind.backend.users()).map((user) => ownerOfUser(user))]
    for (const owner of owners) {
      const stores = mind.backend.owned(owner)
      for (const kind of DOC_KINDS) {
        for (const ref of await stores.documents.list(kind)) {
          const doc = await stores.documents.read(kind, ref.slug)
          if (doc) rows.set(`${owner} live ${kind}/${ref.slug}`, Buffer.from(serializeFrontmatter(doc.frontmatter, doc.body)))
        }
      }
      for (const path of (await stores.documents.archivedPaths?.()) ?? []) rows.set(`${owner} archived ${path}`, Buffer.from((await stores.documents.readArchived?.(path)) ?? ''))
      const events = await stores.activity.read()
      events.forEach((event, i) => {
        rows.set(`${owner} activity ${String(i).padStart(4, '0')}`, Buffer.from(JSON.stringify({ ts: event.ts, type: event.type, content: event.content, summary: event.summary, meta: event.meta })))
      })
    }
  } finally {
    await mind.close()
  }
  return rows
}

/**
 * `kills` trials on PostgreSQL at `url` (see the module comment): one in three killed uniformly
 * over the unkilled run's consolidation time, the others up to 40 ms after a random one of the
 * model requests the unkilled run made (rows are not watched as files are; each unit is written
 * right after its last model call). `requests` counts the requests the model server received.
 */
export async function runPostgresKillTrials(options: { dir: string; env: Record<string, string>; url: string; databaseUrl: string; kills: number; seed: number; requests: () => number }): Promise<{ unkilledMs: number; trials: KillTrial[] }> {
  const at = (name: string) => ({ home: join(options.dir, name), env: { ...options.env, ENGRAM_DATABASE_URL: options.databaseUrl, ENGRAM_DATABASE_SCHEMA: freshSchema() } })
  const reference = at('unkilled')
  await buildHome(reference.home, reference.env, options.url)
  const before = await storeRows(reference.home, reference.env)
  const asked = options.requests()
  const unkilled = await runChild(reference.home, reference.env, options.url)
  const calls = Math.max(1, options.requests() - asked)
  if (unkilled.code !== 0 || unkilled.ms === undefined) throw new Error(`the unkilled run failed (${unkilled.code}): ${unkilled.stderr}`)
  const expected = await storeRows(reference.home, reference.env)
  const random = seededRandom(options.seed)
  const trials: KillTrial[] = []
  for (let i = 0; i < options.kills; i++) {
    const trial = at(`trial-${i}`)
    await buildHome(trial.home, trial.env, options.url)
    const point: KillPoint = i % 3 === 0 ? { afterStartMs: Math.round(random() * unkilled.ms) } : { afterRequests: { count: 1 + Math.floor(random() * calls), seen: options.requests }, thenMs: Math.round(random() * 40) }
    const delayMs = 'afterStartMs' in point ? point.afterStartMs : 'thenMs' in point ? point.thenMs : 0
    const killed = await runChild(trial.home, trial.env, options.url, point)
    const left = await storeRows(trial.home, trial.env)
    const leftAt: KillTrial['leftAt'] = !killed.killed ? 'not-killed' : compareTrees(before, left).length === 0 ? 'untouched' : compareTrees(expected, left).length === 0 ? 'complete' : 'partial'
    const recovery = await runChild(trial.home, trial.env, options.url)
    trials.push({ point: 'afterStartMs' in point ? 'after start' : `after model request ${'afterRequests' in point ? point.afterRequests.count : 0}`, delayMs, leftAt, differ: compareTrees(expected, await storeRows(trial.home, trial.env)), recoveryCode: recovery.code, recoveryStderr: recovery.code === 0 ? '' : recovery.stderr })
  }
  return { unkilledMs: unkilled.ms, trials }
}
