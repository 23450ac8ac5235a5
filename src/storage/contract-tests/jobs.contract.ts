/** Contract suite for Jobs: the SQLite and PostgreSQL job tables must both pass it. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { EngramError } from '../../core/errors.ts'
import type { JobRun, Jobs, JobStatus } from '../contracts.ts'

export interface JobsFixture {
  jobs: Jobs
  cleanup(): Promise<void>
}

function run(job: string, agent: string, day: number, status: JobStatus = 'ok', details: Record<string, unknown> = {}): Omit<JobRun, 'id'> {
  const start = Date.parse('2026-04-01T03:00:00.000Z') + day * 86_400_000
  return {
    job,
    agent,
    startedAt: new Date(start).toISOString(),
    finishedAt: new Date(start + 90_000).toISOString(),
    status,
    details,
  }
}

/** Registers the Jobs contract tests under `describe(name)`. */
export function runJobsContract(name: string, make: () => Promise<JobsFixture>): void {
  async function withJobs(fn: (jobs: Jobs) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture.jobs)
    } finally {
      await fixture.cleanup()
    }
  }

  describe(`Jobs contract: ${name}`, () => {
    test('a recorded run comes back with an id and its details', () =>
      withJobs(async (jobs) => {
        const recorded = await jobs.record(run('daily', 'alpha', 0, 'ok', { episodes: 3, notes: ['a', 'b'] }))
        assert.equal(typeof recorded.id, 'number')
        assert.deepEqual(recorded, { id: recorded.id, ...run('daily', 'alpha', 0, 'ok', { episodes: 3, notes: ['a', 'b'] }) })
        assert.deepEqual(await jobs.lastRun('daily', 'alpha'), recorded)
        const second = await jobs.record(run('daily', 'alpha', 1))
        assert.notEqual(second.id, recorded.id)
      }))

    test('lastRun is the latest finished run of that job and agent, optionally of one status', () =>
      withJobs(async (jobs) => {
        assert.equal(await jobs.lastRun('daily', 'alpha'), null)
        await jobs.record(run('daily', 'alpha', 0, 'ok'))
        await jobs.record(run('daily', 'alpha', 2, 'failed', { error: 'boom' }))
        await jobs.record(run('daily', 'alpha', 1, 'skipped'))
        await jobs.record(run('daily', 'beta', 5, 'ok'))
        await jobs.record(run('weekly', 'alpha', 6, 'ok'))
        const last = await jobs.lastRun('daily', 'alpha')
        assert.equal(last?.status, 'failed')
        assert.deepEqual(last?.details, { error: 'boom' })
        assert.equal((await jobs.lastRun('daily', 'alpha', 'ok'))?.finishedAt, run('daily', 'alpha', 0).finishedAt)
        assert.equal((await jobs.lastRun('daily', 'alpha', 'skipped'))?.finishedAt, run('daily', 'alpha', 1).finishedAt)
        assert.equal(await jobs.lastRun('monthly', 'alpha'), null)
      }))

    test('runs lists newest first, filtered by job and agent, up to a limit', () =>
      withJobs(async (jobs) => {
        await jobs.record(run('daily', 'alpha', 0))
        await jobs.record(run('weekly', 'alpha', 1))
        await jobs.record(run('daily', 'beta', 2))
        await jobs.record(run('daily', 'alpha', 3))
        const all = await jobs.runs()
        assert.deepEqual(
          all.map((r) => `${r.job}/${r.agent}`),
          ['daily/alpha', 'daily/beta', 'weekly/alpha', 'daily/alpha'],
        )
        assert.deepEqual(
          (await jobs.runs({ job: 'daily' })).map((r) => r.agent),
          ['alpha', 'beta', 'alpha'],
        )
        assert.deepEqual(
          (await jobs.runs({ agent: 'alpha', limit: 2 })).map((r) => r.job),
          ['daily', 'weekly'],
        )
        assert.deepEqual(await jobs.runs({ job: 'none' }), [])
      }))

    test('an invalid run is refused', () =>
      withJobs(async (jobs) => {
        await assert.rejects(jobs.record({ ...run('daily', 'alpha', 0), status: 'maybe' as JobStatus }), (error: unknown) => {
          assert.ok(EngramError.is(error))
          assert.equal(error.code, 'invalid_argument')
          return true
        })
        assert.deepEqual(await jobs.runs(), [])
      }))

    test('purgeRuns deletes the runs of the named jobs, of every agent', () =>
      withJobs(async (jobs) => {
        await jobs.record(run('immediate-encoding:s-ann', 'alpha', 0))
        await jobs.record(run('immediate-encoding:s-ann', 'beta', 1))
        await jobs.record(run('immediate-encoding:s-bob', 'alpha', 2))
        assert.equal(await jobs.purgeRuns(['immediate-encoding:s-ann', 'never-ran']), 2)
        assert.equal(await jobs.lastRun('immediate-encoding:s-ann', 'alpha'), null)
        assert.ok(await jobs.lastRun('immediate-encoding:s-bob', 'alpha'))
        assert.equal(await jobs.purgeRuns([]), 0)
      }))
  })
}
