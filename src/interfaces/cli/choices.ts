/**
 * Options that take one of a few words (`--kind always|never|…`): a wrong word is refused with
 * every word the option takes and the closest one, in the command line's own terms.
 */
import { ENGRAM_KINDS, type EngramKind, isRuleKind } from '../../core/engram.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { closest } from './did-you-mean.ts'

/** Words a person may use for a family of kinds: a rule is one of three kinds here. */
export const KIND_FAMILIES: Readonly<Record<string, readonly EngramKind[]>> = {
  rule: ENGRAM_KINDS.filter(isRuleKind),
  rules: ENGRAM_KINDS.filter(isRuleKind),
}

function refusal(option: string, allowed: readonly string[], wrong: string, families: Readonly<Record<string, readonly string[]>>): EngramError {
  const family = families[wrong.toLowerCase()]
  const near = family === undefined ? closest(wrong, allowed) : undefined
  const fix =
    family !== undefined
      ? `"${wrong}" is not one kind but ${family.length}: did you mean --${option} ${family.slice(0, -1).join(', ')} or ${family.at(-1)}?`
      : near !== undefined
        ? `did you mean --${option} ${near}?`
        : `pass one of them, e.g. --${option} ${allowed[0]}`
  return new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `--${option} must be one of: ${allowed.join(', ')} (not "${wrong}").`,
    fix,
    details: { option, allowed, value: wrong },
  })
}

/** `value` when it is one of `allowed`; `fallback` when it was not given; else the refusal. */
export function choiceOf<T extends string>(value: unknown, allowed: readonly T[], option: string, options: { fallback?: T; families?: Readonly<Record<string, readonly string[]>> } = {}): T {
  if (value === undefined && options.fallback !== undefined) return options.fallback
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T
  if (value === undefined) {
    throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `--${option} is required: one of ${allowed.join(', ')}.`, fix: `pass e.g. --${option} ${allowed[0]}`, details: { option, allowed } })
  }
  throw refusal(option, allowed, String(value), options.families ?? {})
}

/** A comma-separated list of `allowed` words (`--kinds rule,lesson`); an unknown one is refused as `choiceOf` refuses. */
export function choicesOf<T extends string>(value: unknown, allowed: readonly T[], option: string): T[] {
  const words = String(value)
    .split(',')
    .map((word) => word.trim())
    .filter((word) => word !== '')
  if (words.length === 0) throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `--${option} has no values.`, fix: `pass a comma-separated list of ${allowed.join(', ')}` })
  const wrong = words.find((word) => !(allowed as readonly string[]).includes(word))
  if (wrong !== undefined) throw refusal(option, allowed, wrong, {})
  return words as T[]
}
