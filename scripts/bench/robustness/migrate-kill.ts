/**
 * Benchmark (decision 0052): `engram migrate --to postgres://…` killed with SIGKILL at
 * random points, each time followed by a rerun. An embedded home (four owners' memory, confirmations,
 * turns, job runs, long conversations with a three-level summary DAG) is migrated once to the end
 * (the reference); then each trial migrates into a fresh schema in a child process killed after a
 * delay drawn over the part of the reference run that writes, runs the same command again, and
 * compares the schema with the reference: every row of every table (counts and contents, ids and
 * times two unkilled runs fill differently left out: decision 0085) and the digests per
 * conversation and per tree. Last, a target changed by hand must be reported incomplete with a non-zero exit.
 *
 * Needs PostgreSQL: ENGRAM_DATABASE_URL, or the test server `npm run bench -- robustness --backend
 * postgres` starts. Run on its own: `node scripts/bench/robustness/migrate-kill.ts [--kills 24]
 * [--seed N] [--conversations 3] [--messages 400]` (through `scripts/run.sh with-postgres node …`).
 */
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import {
  buildMigrationHome,
  dropKillRunSchema,
  type KillTrial,
  killRunSchema,
  killTrial,
  referenceRun,
  runMigrate,
  seededRandom,
} from '../../../src/memory/portability/test-support/migrate-kill.ts'
import { makeTempHome } from '../../../src/testing/temp-home.ts'
import { benchDatabaseUrl, describeServer } from '../postgres-target.ts'

export interface MigrateKillBenchOptions {
  /** Runs killed (default 24, as the issue's measurement). */
  kills?: number
  seed?: number
  /** Long conversations of the home (default 3) and messages each (default 400). */
  conversations?: number
  messages?: number
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

export async function run(options: MigrateKillBenchOptions = {}): Promise<string> {
  let url: string
  try {
    url = benchDatabaseUrl()
  } catch (error) {
    return `(not run: ${(error as Error).message})`
  }
  const kills = options.kills ?? 24
  const seed = options.seed ?? 1
  const tmp = makeTempHome('engram-bench-migrate-kill-')
  try {
    await buildMigrationHome(tmp.home, tmp.env, { conversations: options.conversations ?? 3, messages: options.messages ?? 400 })
    const reference = await referenceRun(tmp.home, tmp.env, url, 'bench')
    const random = seededRandom(seed)
    const trials: KillTrial[] = []
    for (let attempt = 0; trials.filter((trial) => trial.killed).length < kills && attempt < kills * 2; attempt++) {
      const delayMs = Math.round(reference.openedAtMs + random() * (reference.run.ms - reference.openedAtMs))
      trials.push(await killTrial(tmp.home, tmp.env, url, reference, delayMs, 'bench'))
    }
    const killed = trials.filter((trial) => trial.killed)
    const count = (landing: KillTrial['landing']) => killed.filter((trial) => trial.landing === landing).length
    const summaries = reference.rows.ctx_summaries ?? 0
    const partSummaries = killed.filter((trial) => trial.left.summaries > 0 && trial.left.summaries < summaries)
    const complete = killed.filter((trial) => trial.rerun.code === 0 && trial.rerun.json?.data?.status === 'complete').length
    const same = killed.filter((trial) => trial.rowsDiffer.length === 0 && trial.digestSame).length
    const reruns = killed.map((trial) => trial.rerun.ms)

    // A target changed by hand: reported incomplete, never done.
    const schema = killRunSchema('bench')
    let tampered = ''
    try {
      await runMigrate(tmp.home, tmp.env, url, schema)
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(`UPDATE "${schema}".ctx_messages SET content = 'changed by hand' WHERE seq = 3 AND conversation_id = (SELECT min(id) FROM "${schema}".ctx_conversations)`)
      } finally {
        await client.end()
      }
      const again = await runMigrate(tmp.home, tmp.env, url, schema)
      tampered = `exit ${again.code}, status ${again.json?.data?.status}, ${again.json?.data?.agents?.[0]?.verification?.differences.length ?? 0} difference(s) named`
    } finally {
      await dropKillRunSchema(url, schema)
    }

    const rows = Object.entries(reference.rows).filter(([table]) => table.startsWith('ctx_') || table === 'docs_live' || table === 'engram_files')
    return [
      `Server: ${await describeServer(url)}. Seed ${seed}. The home: ${rows.map(([table, n]) => `${table} ${n}`).join(', ')}.`,
      `Unkilled run: ${(reference.run.ms / 1000).toFixed(2)} s, the target's schema created at ${(reference.openedAtMs / 1000).toFixed(2)} s; kills drawn uniformly between the two.`,
      '',
      '| runs killed with SIGKILL | left mid-copy (some rows) | of them with some summaries but not all | before any row | every row there (reindex, verification) | reruns exit 0 and "complete" | reruns equal to the unkilled run (every row of every table, digests per conversation and tree) | rerun time median / max |',
      '|---|---|---|---|---|---|---|---|',
      `| ${killed.length} | ${count('mid-run')} | ${partSummaries.length} | ${count('before any row')} | ${count('every row there')} | ${complete} | ${same} | ${(median(reruns) / 1000).toFixed(2)} s / ${(Math.max(...reruns) / 1000).toFixed(2)} s |`,
      '',
      `A target with one message changed by hand, migrated again: ${tampered}.`,
    ].join('\n')
  } finally {
    tmp.cleanup()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { kills: { type: 'string' }, seed: { type: 'string' }, conversations: { type: 'string' }, messages: { type: 'string' } } })
  console.log(
    await run({
      ...(values.kills ? { kills: Number(values.kills) } : {}),
      ...(values.seed ? { seed: Number(values.seed) } : {}),
      ...(values.conversations ? { conversations: Number(values.conversations) } : {}),
      ...(values.messages ? { messages: Number(values.messages) } : {}),
    }),
  )
}
