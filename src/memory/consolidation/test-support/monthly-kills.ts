/**
 * Monthly forgetting killed at random points (decision 0053), for
 * test/monthly-kill.test.ts: the scenario the kill harness (consolidation-kills.ts) runs.
 *
 * Two users whose trees hold knowledge, a procedure and compressed episodes unused for long
 * enough to be forgotten, a few they keep, and (Ada) a procedure with more than five saved
 * versions. The home is lived in on the morning of the 1st of May (that day's scheduled work,
 * the month's forgetting included, already ran on an empty home); `engram consolidate monthly` at
 * `MONTHLY_AT` (`monthly-child.ts`, a process of its own, offline) then moves the due memories to
 * `archive/forgotten/`, records each act in its owner's activity log, and moves the procedure's
 * versions beyond the five newest to `archive/forgotten/versions/`.
 */
import { fileURLToPath } from 'node:url'
import { ManualClock } from '../../../core/clock.ts'
import { ownerOfUser } from '../../../core/owner.ts'
import { createMind } from '../../../mind.ts'
import type { KillScenario } from './consolidation-kills.ts'

const LIVED_AT = '2026-05-01T08:00:00.000Z'
const MONTHLY_AT = '2026-05-01T09:00:00.000Z'

/** Offline, no background work: monthly forgetting needs no model. */
export const MONTHLY_SETTINGS: Record<string, unknown> = { 'jobs.eager': false }

const daysBefore = (days: number): string => new Date(Date.parse(LIVED_AT) - days * 86_400_000).toISOString()

async function buildMonthlyHome(home: string, env: Record<string, string>): Promise<void> {
  const clock = new ManualClock(LIVED_AT)
  const mind = await createMind({ home, env, ignoreConfigFile: true, clock, settings: MONTHLY_SETTINGS })
  try {
    for (const user of ['ada', 'bob']) {
      const s = mind.session(`${user}-1`, { user })
      const turn = await s.begin(`Good morning, this is ${user}.`)
      clock.advance(5_000)
      await s.end(turn, 'Good morning.')
      await s.close()
    }
    // Today's scheduled work (daily, weekly, this month's forgetting) runs here, before the old memories exist.
    await mind.maintain()
    const old = (days: number) => ({ created_at: daysBefore(days), updated_at: daysBefore(days), confidence: 0.7, version: 1, auto_consolidated: true })
    for (const user of ['ada', 'bob']) {
      const documents = mind.backend.owned(ownerOfUser(user)).documents
      for (const topic of ['printer', 'parking', 'lunch']) await documents.write('knowledge', `${user}-${topic}`, old(200), `# ${topic}\n\n${user} once noted something about the ${topic}.\n`)
      await documents.write('knowledge', `${user}-recent`, old(10), `# Recent\n\n${user} noted this ten days ago.\n`)
      await documents.write(
        'procedure',
        `${user}-old-backup`,
        { description: 'Back up the old server', confidence: 0.5, success_count: 0, failure_count: 0, version: 1, created_at: daysBefore(300), updated_at: daysBefore(300) },
        '# Back up\n\n1. Copy the disk\n',
      )
      for (const days of [200, 190]) {
        const day = daysBefore(days).slice(0, 10)
        await documents.write('episode', day, { date: day, compressed: true }, `# ${day}\n\n## 10:00 — ${user} talked about the weather\n\nIt rained.\n`)
      }
    }
    // Ada's deploy procedure, rewritten eight times: seven saved versions, two beyond the five kept.
    const ada = mind.backend.owned(ownerOfUser('ada')).documents
    for (let version = 1; version <= 8; version++) {
      clock.advance(1_000)
      await ada.write('procedure', 'deploy', { description: 'Deploy the app', confidence: 0.8, version, protected: true, created_at: daysBefore(50), updated_at: clock.now().toISOString() }, `# Deploy\n\n1. Step ${version}\n`)
    }
  } finally {
    await mind.close()
  }
}

export const MONTHLY_FORGETTING: KillScenario = {
  build: (home, env) => buildMonthlyHome(home, env),
  child: fileURLToPath(new URL('./monthly-child.ts', import.meta.url)),
  instant: MONTHLY_AT,
}
