// @slow: kills a migration to PostgreSQL with SIGKILL at many points, each followed by a rerun
/**
 * Decision 0052: `engram migrate --to postgres://…` killed with SIGKILL at
 * random points, each time followed by a rerun, must end exactly where an unkilled run ends — the
 * same rows in every table and the same digest per conversation and per tree — and say
 * "complete"; a target that differs from its source is reported "incomplete" with a non-zero
 * exit, never "done". Each run is a child process of the real CLI on a real PostgreSQL server.
 *
 * The kill points are drawn over the part of the unkilled run that writes (from the moment its
 * schema appears to its end), so they land in the tree import, the conversations, the summaries,
 * the turns, the reindex and the verification alike. ENGRAM_TEST_SEED replays a run's draws.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { ExitCode } from '../src/interfaces/cli/io.ts'
import {
  buildMigrationHome,
  dropKillRunSchema,
  type KillTrial,
  killRunSchema,
  killTrial,
  type ReferenceRun,
  referenceRun,
  runMigrate,
  seededRandom,
} from '../src/memory/portability/test-support/migrate-kill.ts'
import { onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

/** The issue asks for at least 20 kills. */
const KILLS = 20

onPostgres('engram migrate killed and run again', (url) => {
  describe('engram migrate --to postgres://… killed with SIGKILL, then run again', () => {
    let tmp: TempHome
    let reference: ReferenceRun

    before(async () => {
      tmp = makeTempHome('engram-migrate-kill-')
      // Small enough to keep the file near a minute, big enough that the copy is most of a run: 2 × 240 messages, 76 summaries in a three-level DAG.
      await buildMigrationHome(tmp.home, tmp.env, { conversations: 2, messages: 240 })
      reference = await referenceRun(tmp.home, tmp.env, url)
    })
    after(() => tmp?.cleanup())

    test(`${KILLS} kills at random points, each followed by a rerun: the rerun ends row for row and digest for digest where an unkilled run ends`, async (t) => {
      assert.equal(reference.run.json?.data?.status, 'complete')
      assert.ok((reference.rows.ctx_summaries ?? 0) >= 70, `the reference holds the summary DAG: ${JSON.stringify(reference.rows)}`)
      const seed = Number(process.env.ENGRAM_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31))
      t.diagnostic(`seed ${seed} (ENGRAM_TEST_SEED=${seed} draws the same kill points); unkilled run ${Math.round(reference.run.ms)} ms, target opened at ${Math.round(reference.openedAtMs)} ms`)
      const random = seededRandom(seed)
      const trials: KillTrial[] = []
      // A delay past the end of a faster run kills nothing: draw again until KILLS kills landed
      // (bounded). A run that ended before its delay shows runs end sooner than the reference (a
      // first run slowed by a loaded machine): later delays are drawn before that point.
      let runEndMs = reference.run.ms
      for (let attempt = 0; trials.filter((trial) => trial.killed).length < KILLS && attempt < KILLS * 3; attempt++) {
        const delayMs = Math.round(reference.openedAtMs + random() * (runEndMs - reference.openedAtMs))
        const trial = await killTrial(tmp.home, tmp.env, url, reference, delayMs)
        trials.push(trial)
        if (!trial.killed) runEndMs = Math.max(reference.openedAtMs + 1, Math.min(runEndMs, delayMs))
        const where = `kill after ${delayMs} ms (${trial.landing}, left ${trial.left.messages} messages, ${trial.left.summaries} summaries)`
        assert.equal(trial.rerun.code, ExitCode.ok, `${where}: the rerun exited ${trial.rerun.code}: ${JSON.stringify(trial.rerun.json)} ${trial.rerun.stderr}`)
        assert.equal(trial.rerun.json?.data?.status, 'complete', where)
        assert.deepEqual(trial.rowsDiffer, [], `${where}: rows differ from the unkilled run`)
        assert.ok(trial.digestSame, `${where}: the digests per conversation and per tree differ from the unkilled run`)
      }
      const killed = trials.filter((trial) => trial.killed)
      assert.ok(killed.length >= KILLS, `only ${killed.length} of ${trials.length} runs were killed before they ended`)
      const midRun = killed.filter((trial) => trial.landing === 'mid-run')
      t.diagnostic(`${killed.length} kills: ${midRun.length} mid-run, ${killed.filter((trial) => trial.landing === 'before any row').length} before any row, ${killed.filter((trial) => trial.landing === 'every row there').length} with every row there (reindex, verification)`)
      // The point of the run: kills that left a partly copied target, which the rerun finished.
      assert.ok(midRun.length >= 5, `only ${midRun.length} kills landed mid-copy`)
      assert.ok(
        midRun.some((trial) => trial.left.summaries > 0 && trial.left.summaries < (reference.rows.ctx_summaries ?? 0)),
        'a kill left some summaries but not all (what the issue saw), and the rerun finished them',
      )
    })

    test('a target that differs from its source is reported incomplete, with a non-zero exit, never done', async () => {
      const schema = killRunSchema()
      try {
        const first = await runMigrate(tmp.home, tmp.env, url, schema)
        assert.equal(first.code, ExitCode.ok, JSON.stringify(first.json))
        // Someone changed a copied message in the database: a migration cannot put it back, and must not call the copy done.
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        try {
          const changed = await client.query(
            `UPDATE "${schema}".ctx_messages SET content = 'changed by hand' WHERE seq = 3 AND conversation_id = (SELECT id FROM "${schema}".ctx_conversations WHERE session_id = 'long-1')`,
          )
          assert.equal(changed.rowCount, 1)
          // And a copied archived document, edited by hand (a rerun writes a live document again, but
          // never over an archive it did not write): its file and its tree differ.
          const edited = await client.query(`UPDATE "${schema}".docs_archived SET body = body || 'edited by hand' WHERE owner = 'agent' AND slug = 'old-office'`)
          assert.equal(edited.rowCount, 1)
        } finally {
          await client.end()
        }
        const again = await runMigrate(tmp.home, tmp.env, url, schema)
        assert.equal(again.code, ExitCode.incomplete, JSON.stringify(again.json))
        assert.equal(again.json?.ok, false)
        assert.equal(again.json?.data?.status, 'incomplete')
        const [agent] = again.json?.data?.agents ?? []
        assert.ok(agent)
        assert.equal(agent.status, 'incomplete')
        const differences = JSON.stringify(agent.verification.differences)
        assert.match(differences, /conversation long-1: messages/)
        assert.match(differences, /"what":"file agents\/default\/archive\/forgotten\/knowledge\/old-office\.md"/, differences)
        assert.match(differences, /"what":"tree agents\/default"/, differences)
      } finally {
        await dropKillRunSchema(url, schema)
      }
    })
  })
})
