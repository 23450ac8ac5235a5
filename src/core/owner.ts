/**
 * Every memory has an owner (DESIGN.md §1.8, decision 0017): the agent, the home's shared memory,
 * or one user. Whatever is written in a session with a user belongs to that user unless the writer
 * promotes it on purpose; a session without a user writes agent-owned memory.
 *
 * Who may read what:
 *
 * | owner          | stored under                         | visible to                                   |
 * |----------------|--------------------------------------|----------------------------------------------|
 * | `agent`        | `agents/<a>/…`                       | every session of agent `<a>`                 |
 * | `user:<id>`    | `agents/<a>/users/<key>/…`           | the sessions of `<id>` with agent `<a>`      |
 * | `shared`       | `shared/…`                           | every session of every agent of the home     |
 *
 * A user's profile (`shared/users/<key>.md`) and resolutions are owned by the user and shared by
 * the agents of one home, never with other users. `owner` is not `scope`: scope says global or
 * project, owner says whose.
 */
import { EngramError, ErrorCode } from './errors.ts'
import { textProblem } from './well-formed-text.ts'

export type Owner = 'agent' | 'shared' | `user:${string}`

/** How a writer names an owner relative to its session: its user, its agent, or everyone. */
export const OWNER_CHOICES = ['user', 'agent', 'shared'] as const
export type OwnerChoice = (typeof OWNER_CHOICES)[number]

/** Who reads: a session's agent and user (no user: the agent's own view, agent-owned and shared only). */
export interface Viewer {
  agent: string
  user?: string | undefined
}

/** The longest user id accepted (a file name must hold its encoded form). */
export const MAX_USER_ID_LENGTH = 128

function invalidUser(user: unknown, why: string): EngramError {
  return new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `${JSON.stringify(user)} is not a valid user id: ${why}.`,
    fix: `pass a non-empty user id of at most ${MAX_USER_ID_LENGTH} characters without control characters, e.g. { user: 'ada' } (the CLI takes --user)`,
    details: { user },
  })
}

/** Returns the user id when it can own memory; throws `invalid_argument` with the fix otherwise. */
export function validateUserId(user: unknown): string {
  if (typeof user !== 'string') throw invalidUser(user, 'it must be a string')
  if (user.trim() === '') throw invalidUser(user, 'it is empty')
  if (user.length > MAX_USER_ID_LENGTH) throw invalidUser(user.slice(0, 40), `it is longer than ${MAX_USER_ID_LENGTH} characters`)
  if (/[\u0000-\u001f\u007f\u2028\u2029]/.test(user)) throw invalidUser(user, 'it contains control characters or line separators')
  // Half a character is stored (and encoded in file names) as U+FFFD: two users would share one
  // tree, one key, one profile (decision 0055).
  const half = textProblem(user)
  if (half) throw invalidUser(user, `it holds ${half}`)
  return user
}

/** The owner of what a session with `user` writes by default. */
export function ownerOfUser(user: string | undefined): Owner {
  return user === undefined ? 'agent' : `user:${validateUserId(user)}`
}

/** The user an owner stands for, or undefined for `agent` and `shared`. */
export function userOfOwner(owner: Owner): string | undefined {
  return owner.startsWith('user:') ? owner.slice(5) : undefined
}

export function isOwner(value: unknown): value is Owner {
  if (value === 'agent' || value === 'shared') return true
  if (typeof value !== 'string' || !value.startsWith('user:')) return false
  try {
    validateUserId(value.slice(5))
    return true
  } catch {
    return false
  }
}

/**
 * The owner a writer asked for (`owner: 'agent'` in a memorize call), resolved against its session.
 * `user` without a user in the session is refused: there is nobody to own it.
 */
export function resolveOwnerChoice(choice: OwnerChoice | undefined, viewer: Viewer): Owner {
  if (choice === undefined) return ownerOfUser(viewer.user)
  if (choice === 'agent' || choice === 'shared') return choice
  if (choice === 'user') {
    if (viewer.user === undefined) {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: 'owner "user" needs a session with a user, and this one has none.',
        fix: 'open the session with { user } (the CLI takes --user), or write with owner "agent"',
      })
    }
    return ownerOfUser(viewer.user)
  }
  throw new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `${JSON.stringify(choice)} is not an owner.`,
    fix: `use one of ${OWNER_CHOICES.join(', ')}`,
  })
}

/** The owners whose memories a viewer sees, most specific first. */
export function visibleOwners(viewer: Viewer): Owner[] {
  return viewer.user === undefined ? ['agent', 'shared'] : [ownerOfUser(viewer.user), 'agent', 'shared']
}

/**
 * Whether a stored memory reaches a viewer. `agent` is the agent that wrote it (undefined for what
 * every agent of the home shares: `shared` memory and user profiles).
 */
export function canSee(viewer: Viewer, memory: { owner: Owner; agent?: string | undefined }): boolean {
  if (memory.agent !== undefined && memory.agent !== viewer.agent) return false
  if (memory.owner === 'agent') return memory.agent !== undefined
  if (memory.owner === 'shared') return true
  return viewer.user !== undefined && memory.owner === `user:${viewer.user}`
}

/**
 * The file-name form of a user id: the id itself when it is made of letters, digits and `._@+-`
 * (and does not start with a dot), else percent-encoded like a URI component (`/` → `%2F`, a
 * leading `.` → `%2E`). Reversible with `userFromKey`, so a folder says whose it is.
 */
export function userKey(user: string): string {
  validateUserId(user)
  let key = ''
  for (const char of user) {
    if (/^[A-Za-z0-9_@+-]$/.test(char) || (char === '.' && key !== '')) key += char
    else key += [...Buffer.from(char, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('')
  }
  // Two dots in a row would read as a parent folder to a careless tool: encode the second.
  return key.replaceAll('..', '.%2E')
}

/** The user id a key stands for (the inverse of `userKey`), or undefined when it is not one. */
export function userFromKey(key: string): string | undefined {
  try {
    const user = decodeURIComponent(key)
    return userKey(user) === key ? user : undefined
  } catch {
    return undefined
  }
}
