/**
 * Who a request to `engram serve` acts for (decision 0038): bearer tokens from `serve.tokens`, each
 * for one (agent, user), the agent alone, or an administrator. Tokens are compared by their
 * SHA-256 (a map lookup on a digest, not a string compare that stops at the first difference).
 */
import { createHash, createHmac } from 'node:crypto'
import { EngramError, ErrorCode } from '../../core/errors.ts'

/** What a request may do: act for `user` (or the agent alone), or name any user (`admin`). */
export interface Principal {
  /** The agent the credential is for; undefined for an administrator (any agent this server serves). */
  agent: string | undefined
  user: string | undefined
  admin: boolean
}

/**
 * One credential as a browser session knows it (decision 0051): an id that names it without
 * revealing the token, the key its sessions are signed with (derived from the token, so a session
 * ends when its token leaves `serve.tokens`), and what it grants.
 */
export interface Credential {
  id: string
  key: Buffer
  principal: Principal
}

export interface Credentials {
  /** No token is configured: loopback only, every request acts as the agent alone. */
  readonly open: boolean
  /** The principal of a presented bearer token, or undefined when it is not one of them. */
  lookup(token: string): Principal | undefined
  /** The credential a browser may exchange `?token=` for: a configured token, or an open server's dashboard token. */
  exchangeable(token: string): Credential | undefined
  /** The credential a browser session names by its id. */
  byId(id: string): Credential | undefined
}

const MIN_TOKEN_CHARS = 16
const ADMIN = 'admin'

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** The credential of a token's digest: an id and a session key, both derived one-way from it. */
function credentialOf(key: string, principal: Principal): Credential {
  const derive = (purpose: string) => createHmac('sha256', key).update(purpose).digest()
  return { id: derive('engram browser credential id').subarray(0, 12).toString('base64url'), key: derive('engram browser session key'), principal }
}

/** Credentials over `bearer` (digest → credential) and `exchangeOnly` (tokens a browser may exchange but no program may present). */
function credentialsOf(open: boolean, bearer: Map<string, Credential>, exchangeOnly: Map<string, Credential>): Credentials {
  const byId = new Map<string, Credential>()
  for (const credential of [...bearer.values(), ...exchangeOnly.values()]) byId.set(credential.id, credential)
  return {
    open,
    lookup: (token) => bearer.get(digest(token))?.principal,
    exchangeable: (token) => {
      const key = digest(token)
      return bearer.get(key) ?? exchangeOnly.get(key)
    },
    byId: (id) => byId.get(id),
  }
}

function invalid(message: string): EngramError {
  return new EngramError({
    code: ErrorCode.configInvalid,
    category: 'user',
    message: `serve.tokens: ${message}`,
    fix: 'write serve.tokens (ENGRAM_SERVE_TOKENS) as TOKEN=AGENT:USER, TOKEN=AGENT or TOKEN=admin, comma-separated, each token 16 characters or more (e.g. from `openssl rand -hex 24`)',
  })
}

/** Parse `serve.tokens`: `TOKEN=AGENT:USER`, `TOKEN=AGENT`, `TOKEN=admin`, comma-separated. Throws `config_invalid` naming the bad entry (never the token). */
export function parseCredentials(setting: string | undefined): Credentials {
  const principals = new Map<string, Credential>()
  const entries = (setting ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  entries.forEach((entry, i) => {
    const at = entry.lastIndexOf('=')
    if (at <= 0 || at === entry.length - 1) throw invalid(`entry ${i + 1} is not TOKEN=WHO.`)
    const token = entry.slice(0, at).trim()
    const who = entry.slice(at + 1).trim()
    if (token.length < MIN_TOKEN_CHARS) throw invalid(`the token of entry ${i + 1} is shorter than ${MIN_TOKEN_CHARS} characters.`)
    const key = digest(token)
    if (principals.has(key)) throw invalid(`entry ${i + 1} repeats a token.`)
    if (who === ADMIN) {
      principals.set(key, credentialOf(key, { agent: undefined, user: undefined, admin: true }))
      return
    }
    const colon = who.indexOf(':')
    const agent = (colon < 0 ? who : who.slice(0, colon)).trim()
    const user = colon < 0 ? undefined : who.slice(colon + 1).trim()
    if (agent === '' || user === '') throw invalid(`entry ${i + 1} names no ${agent === '' ? 'agent' : 'user'} after "=".`)
    principals.set(key, credentialOf(key, { agent, user, admin: false }))
  })
  return credentialsOf(principals.size === 0, principals, new Map())
}

/** Whether `host` (a bind address or a Host header's name) is this machine's loopback. */
export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name)
}

/** Refuse to serve a non-loopback address without credentials (decision 0038). */
export function checkBind(host: string, credentials: Credentials): void {
  if (credentials.open && !isLoopback(host)) {
    throw new EngramError({
      code: ErrorCode.configInvalid,
      category: 'user',
      message: `engram serve will not listen on ${host} without credentials: anyone who can reach it would read and write this agent's memory.`,
      fix: 'set serve.tokens (ENGRAM_SERVE_TOKENS), e.g. "$(openssl rand -hex 24)=admin", or listen on loopback (serve.host 127.0.0.1)',
      details: { host },
    })
  }
}

/**
 * `credentials` with one more token that only a browser may exchange, for `principal` (decision
 * 0051): what `engram serve` puts in the dashboard's printed address when no token is configured.
 * It is not a bearer token of the API, so the address in a browser's history or a terminal's
 * scrollback gives a program nothing; the session it becomes acts for `principal` (the agent alone:
 * what every request of an open server gets, never an administrator's view of every user).
 */
export function withDashboardToken(credentials: Credentials, token: string, principal: Principal): Credentials {
  const key = digest(token)
  const dashboard = credentialOf(key, principal)
  return {
    open: credentials.open,
    lookup: (presented) => credentials.lookup(presented),
    exchangeable: (presented) => (digest(presented) === key ? dashboard : credentials.exchangeable(presented)),
    byId: (id) => (id === dashboard.id ? dashboard : credentials.byId(id)),
  }
}
