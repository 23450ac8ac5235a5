/**
 * The three consolidation jobs as the lifecycle schedules them: their kinds and the job queued for
 * a day, a week or a month. Apart from the consolidations' own code (daily-consolidation.ts,
 * weekly-integration.ts, monthly-forgetting.ts re-export them), so that opening a mind does not
 * load the consolidations: they run in the background, never for a first answer (decision 0082).
 */
import { randomUUID } from 'node:crypto'
import { isoDay } from '../../core/clock.ts'
import type { JobInput } from '../../storage/contracts.ts'

export const DAILY_CONSOLIDATION_JOB = 'consolidation-daily'
export const WEEKLY_INTEGRATION_JOB = 'consolidation-weekly'
export const MONTHLY_FORGETTING_JOB = 'consolidation-monthly'

/** The daily job for `at`'s day. */
export function dailyConsolidationJob(at: Date): Omit<JobInput, 'agent'> {
  return { kind: DAILY_CONSOLIDATION_JOB, key: `${DAILY_CONSOLIDATION_JOB}:${isoDay(at)}`, payload: {}, runAfter: at.toISOString() }
}

/** The ISO week of `at` (`2026-W09`). */
export function isoWeek(at: Date): string {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
  const weekday = day.getUTCDay() || 7
  day.setUTCDate(day.getUTCDate() + 4 - weekday)
  const yearStart = Date.UTC(day.getUTCFullYear(), 0, 1)
  const week = Math.ceil(((day.getTime() - yearStart) / 86_400_000 + 1) / 7)
  return `${day.getUTCFullYear()}-W${String(week).padStart(2, '0')}`
}

/** The weekly job for `at`'s ISO week. */
export function weeklyIntegrationJob(at: Date): Omit<JobInput, 'agent'> {
  return { kind: WEEKLY_INTEGRATION_JOB, key: `${WEEKLY_INTEGRATION_JOB}:${isoWeek(at)}`, payload: {}, runAfter: at.toISOString() }
}

/**
 * The monthly job for `at`'s month, or a forced one of its own (`engram consolidate monthly`). A
 * forced job's key is unique to the call, not only to the instant: a killed process's job, still
 * leased, must not stand for the next process's request at the same instant (a fixed clock).
 */
export function monthlyForgettingJob(at: Date, forced = false): Omit<JobInput, 'agent'> {
  const iso = at.toISOString()
  return {
    kind: MONTHLY_FORGETTING_JOB,
    key: forced ? `${MONTHLY_FORGETTING_JOB}:forced:${iso}:${randomUUID().slice(0, 8)}` : `${MONTHLY_FORGETTING_JOB}:${isoDay(at).slice(0, 7)}`,
    payload: { forced },
    runAfter: iso,
  }
}
