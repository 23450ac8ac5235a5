/**
 * Session ids the interfaces derive for the user they act for (decision 0054): `engram mcp`
 * and `/mcp` work on `mcp:<user>`, the HTTP API's tools on `http:<user>`, and on `mcp` / `http`
 * for the agent alone. A session id belongs to the user it is first opened with (decision 0017),
 * so whoever opened `mcp:carol` first would own the conversation Carol's own MCP connection works
 * on, and lock her out of it. These ids are therefore reserved by their form: `<interface>:<user>`
 * for that user, the bare interface name for the agent alone — on first use too, whatever the
 * store holds, on every backend.
 */
import { EngramError, ErrorCode } from './errors.ts'

/** The interfaces that derive a session id from their user. */
const DERIVING_INTERFACES = ['mcp', 'http'] as const
type DerivingInterface = (typeof DERIVING_INTERFACES)[number]

/** The session id `iface` works on for `user` (the bare name for the agent alone). */
export function derivedSessionId(iface: DerivingInterface, user: string | undefined): string {
  return user === undefined ? iface : `${iface}:${user}`
}

/**
 * Whom a session id is reserved for: `{ user }` (undefined: the agent alone) when it has the form
 * an interface derives, undefined when anyone may open it.
 */
function reservedFor(sessionId: string): { iface: DerivingInterface; user: string | undefined } | undefined {
  for (const iface of DERIVING_INTERFACES) {
    if (sessionId === iface) return { iface, user: undefined }
    if (sessionId.startsWith(`${iface}:`)) return { iface, user: sessionId.slice(iface.length + 1) }
  }
  return undefined
}

/**
 * Throws `access_denied` when `sessionId` is an id an interface derives for someone other than
 * `user` (undefined: a session without a user). Stateless, so it holds before anything is stored.
 */
export function checkDerivedSessionId(sessionId: string, user: string | undefined): void {
  const reserved = reservedFor(sessionId)
  if (reserved === undefined || reserved.user === user) return
  const whose = reserved.user === undefined ? 'the agent alone (no user)' : `user ${JSON.stringify(reserved.user)}`
  const who = user === undefined ? 'a session without a user' : `user ${JSON.stringify(user)}`
  const own = user === undefined ? `"${reserved.iface}"` : JSON.stringify(derivedSessionId(reserved.iface, user))
  throw new EngramError({
    code: ErrorCode.accessDenied,
    category: 'user',
    message: `Session ${JSON.stringify(sessionId)} is the id engram's ${reserved.iface.toUpperCase()} interface uses for ${whose}; ${who} cannot open it.`,
    fix: `use a session id of your own: ids of the form mcp:<user> and http:<user> (and bare "mcp", "http" for the agent alone) are reserved for that user — yours is ${own}, or any id of another form`,
    details: { sessionId, reservedFor: reserved.user ?? null },
  })
}
