/**
 * The spreading-activation terms of the seed (AnimaWorks "Memory Search via Spreading
 * Activation"): recency decay and access frequency, added to the fused relevance.
 *
 *   recency   = weight × 0.5^(age_days / halfLife)     (0.2, 30 days: at most +0.2, halving monthly)
 *   frequency = weight × log(1 + access_count)          (0.1: the Hebbian term)
 */
import { ageInDays } from '../../core/clock.ts'

/** Recency term of a memory created at `createdAt`, seen from `asOf`. A future date counts as now. */
export function recencyTerm(createdAt: string, asOf: Date, weight: number, halfLifeDays: number): number {
  const age = ageInDays(createdAt, asOf)
  if (!Number.isFinite(age)) return 0
  return weight * 0.5 ** (Math.max(0, age) / halfLifeDays)
}

/** Frequency term of a memory recalled `accessCount` times. */
export function frequencyTerm(accessCount: number, weight: number): number {
  return weight * Math.log(1 + Math.max(0, accessCount))
}
