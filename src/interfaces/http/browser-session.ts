/**
 * The dashboard's browser credential (issue 27, decision 0051). A browser never holds a token of
 * the API: opening an address with `?token=` exchanges the token for a session, a signed value in
 * an HttpOnly, SameSite=Strict cookie whose Path is this server's own place, `/engram-<port>`.
 * Cookies are not scoped by port, so a cookie at `Path=/` of 127.0.0.1:7477 goes to every service
 * on 127.0.0.1; one at `/engram-7477` goes only to addresses under that path, which no other
 * service serves. The dashboard is served there (its links rewritten to stay there), and a
 * browser navigating to a page at `/` is sent there; `/v1` and `/mcp` never read a cookie.
 *
 * A session is `<credential id>.<expiry>.<mac>`: the MAC is keyed by a key derived from the token
 * it was exchanged from and covers the place it was made for, so it is checked in any process
 * that has the same `serve.tokens` (two servers on one home, a restart) with nothing stored, and
 * it ends when its token is removed, at its expiry, or when it is presented at another place.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Context, Hono, Next } from 'hono'
import { getCookie, setCookie } from 'hono/cookie'
import { ErrorCode } from '../../core/errors.ts'
import type { Credential, Credentials, Principal } from './credentials.ts'
import { failure, type ServeEnv } from './support.ts'

/** The session cookie's name (its Path makes it this server's). */
const SESSION_COOKIE = 'engram_session'

/** How long a browser session lasts: a working day; then the person opens the address again. */
const SESSION_SECONDS = 12 * 60 * 60

/** What a request re-dispatched from the browser's place carries (in the app's env, which no client can set). */
export interface BrowserRequest {
  /** The place: `/engram-<port>`. */
  base: string
  /** The session's principal; undefined when the browser has no valid session. */
  principal: Principal | undefined
}

/** The browser's place of the server this request reached: its port, from the Host header (else the URL's). */
function browserBase(c: Context): string {
  const url = new URL(c.req.url)
  const port = /:(\d+)$/.exec(c.req.header('host') ?? '')?.[1] ?? (url.port || (url.protocol === 'https:' ? '443' : '80'))
  return `/engram-${port}`
}

function mac(credential: Credential, base: string, expires: string): string {
  return createHmac('sha256', credential.key).update(`engram browser session\n${base}\n${credential.id}\n${expires}`).digest('base64url')
}

/** A new session value for `credential` at `base`, valid until `now` plus the session's length. */
function sessionValue(credential: Credential, base: string, now: number): string {
  const expires = Math.floor(now / 1000 + SESSION_SECONDS).toString(36)
  return `${credential.id}.${expires}.${mac(credential, base, expires)}`
}

/** The principal of a session value at `base`, or undefined when it is not a valid, unexpired session of these credentials. */
function sessionPrincipal(credentials: Credentials, value: string, base: string, now: number): Principal | undefined {
  const [id, expires, signature, ...rest] = value.split('.')
  if (id === undefined || expires === undefined || signature === undefined || rest.length > 0) return undefined
  const credential = credentials.byId(id)
  if (!credential || Number.parseInt(expires, 36) * 1000 <= now) return undefined
  const expected = Buffer.from(mac(credential, base, expires))
  const presented = Buffer.from(signature)
  return expected.length === presented.length && timingSafeEqual(expected, presented) ? credential.principal : undefined
}

/** `path` (under `base` or not) as a path under `base`. */
function underBase(base: string, path: string): string {
  if (path === base || path.startsWith(`${base}/`)) return path
  return `${base}${path}`
}

/** Whether `path` is the API or MCP (never a page: no cookie is read there, and no browser is sent elsewhere). */
function isApi(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/') || path === '/mcp' || path.startsWith('/mcp/')
}

/**
 * Links of a dashboard page kept at the browser's place. The pages write their own links as
 * absolute paths (`href="/memories"`, `data-post="/v1/restore"`); every value a page interpolates
 * goes through `hono/html`'s escaping, which turns `"` into `&quot;`, so an attribute that starts
 * with `="/` can only come from the templates, never from memory text.
 */
function keepLinksAtBase(page: string, base: string): string {
  return page.replace(/(\s(?:href|action|src|data-post)=")\/(?!\/)/g, `$1${base}/`)
}

/**
 * The browser's side of the app, installed by `createServeApp` before anything reads a
 * credential: the `?token=` exchange, the dashboard at the browser's place, and browsers sent there.
 */
export function addBrowserSessions(app: Hono<ServeEnv>, credentials: Credentials): void {
  app.use('*', async (c: Context<ServeEnv>, next: Next) => {
    // Already at the browser's place: this is the request re-dispatched below.
    if (browserRequestOf(c) !== undefined) return next()
    const base = browserBase(c)
    const url = new URL(c.req.url)
    const path = url.pathname

    // A browser opening an address with ?token=: a session at this server's place, and the same
    // address there without the token (out of the address bar, the history and any Referer).
    const offered = c.req.method === 'GET' ? c.req.query('token') : undefined
    if (offered !== undefined) {
      const credential = credentials.exchangeable(offered)
      if (!credential) return failure(c, ErrorCode.unauthorized, 'The token in this address is not one of serve.tokens.', 'open the address engram serve printed, or use a token configured in serve.tokens', { 'WWW-Authenticate': 'Bearer realm="engram"' })
      setCookie(c, SESSION_COOKIE, sessionValue(credential, base, Date.now()), { httpOnly: true, sameSite: 'Strict', path: base, maxAge: SESSION_SECONDS, ...(url.protocol === 'https:' ? { secure: true } : {}) })
      url.searchParams.delete('token')
      c.header('Cache-Control', 'no-store')
      return c.redirect(`${underBase(base, isApi(path) ? '/' : path)}${url.search}`, 303)
    }

    if (path === base || path.startsWith(`${base}/`)) {
      const inner = path.slice(base.length) || '/'
      // The session is for the dashboard: its pages and the buttons' POSTs, never a read of the API or MCP.
      if (inner.startsWith('/mcp') || (isApi(inner) && c.req.method !== 'POST')) return failure(c, ErrorCode.notFound, `No route ${c.req.method} ${path}.`, `call ${inner} with a bearer token, without ${base}`)
      const cookie = getCookie(c, SESSION_COOKIE)
      const browser: BrowserRequest = { base, principal: cookie === undefined ? undefined : sessionPrincipal(credentials, cookie, base, Date.now()) }
      const raw = c.req.raw
      const hasBody = raw.method !== 'GET' && raw.method !== 'HEAD'
      const request = new Request(new URL(`${inner}${url.search}`, url), { method: raw.method, headers: raw.headers, signal: raw.signal, ...(hasBody ? { body: raw.body, duplex: 'half' } : {}) } as RequestInit)
      const answer = await app.fetch(request, { ...(c.env as object), browser })
      if (!(answer.headers.get('content-type') ?? '').startsWith('text/html')) return answer
      const headers = new Headers(answer.headers)
      headers.delete('content-length')
      return new Response(keepLinksAtBase(await answer.text(), base), { status: answer.status, headers })
    }

    // A browser navigating to a page here (a typed address, an old bookmark) goes to its place,
    // where its session is; programs (a bearer token, or neither header) are answered here. Browsers
    // send Sec-Fetch-Mode only to trustworthy origins (https, loopback); on plain http elsewhere a
    // navigation is told by Upgrade-Insecure-Requests, which no API client sends.
    const mode = c.req.header('sec-fetch-mode')
    const navigating = (mode === 'navigate' || (mode === undefined && c.req.header('upgrade-insecure-requests') === '1')) && c.req.header('authorization') === undefined
    if (navigating && (c.req.method === 'GET' || c.req.method === 'HEAD') && !isApi(path)) return c.redirect(`${underBase(base, path)}${url.search}`, 303)
    return next()
  })
}

/** The browser request a re-dispatch carries in the env, if this is one. */
export function browserRequestOf(c: Context<ServeEnv>): BrowserRequest | undefined {
  return (c.env as { browser?: BrowserRequest } | undefined)?.browser
}

/**
 * The principal of the browser session this request may use. At the browser's place, the one the
 * dispatch found. Elsewhere a browser never sends the cookie (its Path), but a request that carries
 * it is held to the same rule: a dashboard page, or a POST to /v1 from a page of this server
 * (Sec-Fetch-Site: same-origin) — never a read of the API, never MCP, never as a bearer token.
 */
export function browserSessionOf(c: Context<ServeEnv>, credentials: Credentials): Principal | undefined {
  const dispatched = browserRequestOf(c)
  if (dispatched !== undefined) return dispatched.principal
  const cookie = getCookie(c, SESSION_COOKIE)
  if (cookie === undefined) return undefined
  const { method, path } = c.req
  const reading = method === 'GET' || method === 'HEAD'
  const allowed = reading ? !isApi(path) : method === 'POST' && path.startsWith('/v1/') && c.req.header('sec-fetch-site') === 'same-origin'
  return allowed ? sessionPrincipal(credentials, cookie, browserBase(c), Date.now()) : undefined
}
