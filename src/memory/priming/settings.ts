/**
 * Priming budgets and how they are split across the four channels.
 *
 * Budgets by message type are the seed's (greeting 500, question 1500, request 3000, heartbeat
 * 200). The split reflects what each kind of message needs: a greeting is mostly "who is this and
 * what happened lately", a question mostly related memories, a request also how-to (skills and
 * procedures), a heartbeat mostly recent activity. Each channel packs within its share; whatever
 * the profile, activity and skills channels leave unused flows to related memories (channel C),
 * the one channel that can always use more.
 */
import { DEFAULT_LIMITS } from '../../config/limits.ts'
import type { ConfigValues } from '../../config/resolve.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { MESSAGE_TYPES, type MessageType } from './classify.ts'

export const PRIMING_CHANNELS = ['profile', 'activity', 'related', 'skills'] as const
export type PrimingChannel = (typeof PRIMING_CHANNELS)[number]

export type ChannelShares = Readonly<Record<PrimingChannel, number>>

export interface PrimingSettings {
  budgets: Readonly<Record<MessageType, number>>
  /** Fractions of the budget per channel, by message type (each row sums to 1). */
  shares: Readonly<Record<MessageType, ChannelShares>>
  /** How far back recent activity looks. */
  activityHours: number
  /** At most this many activity events are read (newest first). */
  activityEvents: number
  /** Longest related memory, in tokens; longer ones are cut with a pointer to their source. */
  itemTokens: number
  /** At most this many skill and procedure matches. */
  skillMatches: number
  /** Recall starts from at most this many characters of a message: its first and last halves (limits.queryChars). */
  queryChars: number
}

export const DEFAULT_PRIMING_SETTINGS: Readonly<PrimingSettings> = Object.freeze({
  budgets: Object.freeze({ greeting: 500, question: 1500, request: 3000, heartbeat: 200 }),
  shares: Object.freeze({
    greeting: Object.freeze({ profile: 0.4, activity: 0.35, related: 0.15, skills: 0.1 }),
    question: Object.freeze({ profile: 0.15, activity: 0.25, related: 0.45, skills: 0.15 }),
    request: Object.freeze({ profile: 0.1, activity: 0.25, related: 0.4, skills: 0.25 }),
    heartbeat: Object.freeze({ profile: 0, activity: 0.7, related: 0.2, skills: 0.1 }),
  }),
  activityHours: 24,
  activityEvents: 60,
  itemTokens: 120,
  skillMatches: 5,
  queryChars: DEFAULT_LIMITS.queryChars,
})

function invalid(key: string, message: string): EngramError {
  return new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `priming.${key} ${message}`,
    fix: `Set priming.${key} in config.json (or its ENGRAM_PRIMING_* variable) to a valid value.`,
  })
}

/** Defaults overlaid with `partial` (budgets and shares merge per type); checked. */
export function resolvePrimingSettings(partial: Partial<PrimingSettings> = {}): PrimingSettings {
  const settings: PrimingSettings = {
    ...DEFAULT_PRIMING_SETTINGS,
    ...Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)),
    budgets: { ...DEFAULT_PRIMING_SETTINGS.budgets, ...partial.budgets },
    shares: { ...DEFAULT_PRIMING_SETTINGS.shares, ...partial.shares },
  }
  for (const type of MESSAGE_TYPES) {
    const budget = settings.budgets[type]
    if (!(Number.isInteger(budget) && budget >= 0)) throw invalid(`${type}Budget`, `must be a whole number of tokens ≥ 0, got ${budget}.`)
    const shares = settings.shares[type]
    const sum = Object.values(shares).reduce((a, b) => a + b, 0)
    if (Object.values(shares).some((v) => !(v >= 0)) || Math.abs(sum - 1) > 1e-6) throw invalid('shares', `for ${type} must be fractions ≥ 0 summing to 1, got ${JSON.stringify(shares)}.`)
  }
  if (!(settings.activityHours > 0)) throw invalid('activityHours', `must be > 0, got ${settings.activityHours}.`)
  for (const key of ['activityEvents', 'itemTokens', 'skillMatches', 'queryChars'] as const) {
    if (!(Number.isInteger(settings[key]) && settings[key] >= 1)) throw invalid(key, `must be a whole number ≥ 1, got ${settings[key]}.`)
  }
  return settings
}

/** The priming settings of a resolved configuration (`config.values.priming`). */
export function primingSettingsFromConfig(values: ConfigValues['priming']): Partial<PrimingSettings> {
  return {
    budgets: { greeting: values.greetingBudget, question: values.questionBudget, request: values.requestBudget, heartbeat: values.heartbeatBudget },
    activityHours: values.activityHours,
  }
}
