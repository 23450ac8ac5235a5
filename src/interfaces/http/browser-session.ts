/**
 * The dashboard's browser credential (decision 0051). A browser never holds a token of
 * the API: opening an address with `?token=` exchanges the token for a session, a signed value in
 * an HttpOnly, SameSite=Strict cookie whose Path is the credential's own place on this server,
 * `/engram-<port>-<id>`. Cookies are not scoped by port, so a cookie at `Path=/` of 127.0.0.1:7477
 * goes to every service on 127.0.0.1; one at a path goes to any service the browser visits at that
 * path. The `<id>` is keyed by the credential (a MAC of the port), so no other service can name the
 * path without the token, and the server shows it only to the request that brought the token (the
 * exchange's 303). The dashboard is served there (its links rewritten to stay there); a browser
 * navigating to a page elsewhere gets a landing page whose script reads the place from this
 * origin's `localStorage` (which another port cannot read); `/v1` and `/mcp` never read a cookie.
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

/** A place: `/engram-<port>-<id>`, the id 22 base64url characters (128 bits of a MAC). */
const PLACE = /^\/engram-(\d{1,5})-([A-Za-z0-9_-]{22})(?=\/|$)/

/** Where the dashboard's script keeps this origin's place, for the landing page (decision 0051). */
export const PLACE_STORAGE_KEY = 'engram.dashboard.place'

/** What a request re-dispatched from the browser's place carries (in the app's env, which no client can set). */
export interface BrowserRequest {
  /** The place: `/engram-<port>-<id>`. */
  base: string
  /** The session's principal; undefined when the browser has no valid session. */
  principal: Principal | undefined
}

/** The port of the server this request reached, from the Host header (else the URL's). */
function requestPort(c: Context): string {
  const url = new URL(c.req.url)
  return /:(\d+)$/.exec(c.req.header('host') ?? '')?.[1] ?? (url.port || (url.protocol === 'https:' ? '443' : '80'))
}

/**
 * The place of `credential`'s sessions on the server at `port`: the port (two servers on one host
 * keep separate sessions) and a MAC of it under the credential's key, so that a service on another
 * port cannot compute it, and every process with the same `serve.tokens` agrees on it.
 */
function placeOf(credential: Credential, port: string): string {
  const id = createHmac('sha256', credential.key).update(`engram browser place\n${port}`).digest().subarray(0, 16).toString('base64url')
  return `/engram-${port}-${id}`
}

function mac(credential: Credential, base: string, expires: string): string {
  return createHmac('sha256', credential.key).update(`engram browser session\n${base}\n${credential.id}\n${expires}`).digest('base64url')
}

/** A new session value for `credential` at `base`, valid until `now` plus the session's length. */
function sessionValue(credential: Credential, base: string, now: number): string {
  const expires = Math.floor(now / 1000 + SESSION_SECONDS).toString(36)
  return `${credential.id}.${expires}.${mac(credential, base, expires)}`
}

/**
 * The principal of a session value on the server at `port`, or undefined when it is not a valid,
 * unexpired session of these credentials, or (given `at`) not one made for the place `at`.
 */
function sessionPrincipal(credentials: Credentials, value: string, port: string, now: number, at?: string): Principal | undefined {
  const [id, expires, signature, ...rest] = value.split('.')
  if (id === undefined || expires === undefined || signature === undefined || rest.length > 0) return undefined
  const credential = credentials.byId(id)
  if (!credential || Number.parseInt(expires, 36) * 1000 <= now) return undefined
  const base = placeOf(credential, port)
  if (at !== undefined && at !== base) return undefined
  const expected = Buffer.from(mac(credential, base, expires))
  const presented = Buffer.from(signature)
  return expected.length === presented.length && timingSafeEqual(expected, presented) ? credential.principal : undefined
}

/** `path` (at a place or not) as a path under `base`. */
function underBase(base: string, path: string): string {
  return `${base}${path.replace(PLACE, '') || '/'}`
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
 * What a browser navigating to a page outside its place gets (a typed address, an old bookmark):
 * the server cannot name the place without naming it to whoever asks, so this page's script reads
 * it from this origin's `localStorage`, where the dashboard's script put it, and goes there; a
 * browser that has none is told to open the printed address. It carries nothing of a credential.
 */
const LANDING_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>engram</title><script src="/assets/engram-landing.js"></script></head>
<body style="font: 15px/1.45 system-ui, sans-serif; margin: 2rem"><h1>engram</h1>
<p data-testid="landing">Opening the dashboard&hellip; If it does not open, this browser has no session of this server here yet, or it has ended: open the address <code>engram serve</code> printed, or this address with <code>?token=</code> and your token from <code>serve.tokens</code>.</p>
</body></html>
`

/** The landing page's script: go to the place this origin's dashboard left, keeping the address's path, query and fragment. */
const LANDING_JS = `(() => {
  let place = null
  try { place = localStorage.getItem(${JSON.stringify(PLACE_STORAGE_KEY)}) } catch {}
  if (place && /^\\/engram-\\d{1,5}-[A-Za-z0-9_-]{22}$/.test(place)) location.replace(place + location.pathname + location.search + location.hash)
})()
`

/** The landing page's Content-Security-Policy: its one script, from this server. */
const LANDING_CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"

/**
 * A dashboard page at its place, kept there: its links rewritten under the place and, when the
 * browser's session is valid here, the place named for the dashboard's script, which keeps it in
 * `localStorage` for the landing page (same origin only; the value is the place's own characters).
 */
function pageAtPlace(page: string, browser: BrowserRequest): string {
  const kept = keepLinksAtBase(page, browser.base)
  return browser.principal === undefined ? kept : kept.replace('<head>', `<head><meta name="engram-place" content="${browser.base}">`)
}

/**
 * The browser's side of the app, installed by `createServeApp` before anything reads a
 * credential: the `?token=` exchange, the dashboard at the credential's place, and the landing page.
 */
export function addBrowserSessions(app: Hono<ServeEnv>, credentials: Credentials): void {
  app.use('*', async (c: Context<ServeEnv>, next: Next) => {
    // Already at the browser's place: this is the request re-dispatched below.
    if (browserRequestOf(c) !== undefined) return next()
    const port = requestPort(c)
    const url = new URL(c.req.url)
    const path = url.pathname

    // A browser opening an address with ?token=: a session at its credential's place, and the
    // same address there without the token (out of the address bar, the history and any Referer).
    // This answer is the only one that names the place, and only to the holder of the token.
    const offered = c.req.method === 'GET' ? c.req.query('token') : undefined
    if (offered !== undefined) {
      const credential = credentials.exchangeable(offered)
      if (!credential) return failure(c, ErrorCode.unauthorized, 'The token in this address is not one of serve.tokens.', 'open the address engram serve printed, or use a token configured in serve.tokens', { 'WWW-Authenticate': 'Bearer realm="engram"' })
      const base = placeOf(credential, port)
      setCookie(c, SESSION_COOKIE, sessionValue(credential, base, Date.now()), { httpOnly: true, sameSite: 'Strict', path: base, maxAge: SESSION_SECONDS, ...(url.protocol === 'https:' ? { secure: true } : {}) })
      url.searchParams.delete('token')
      c.header('Cache-Control', 'no-store')
      return c.redirect(`${underBase(base, isApi(path.replace(PLACE, '')) ? '/' : path)}${url.search}`, 303)
    }

    const place = PLACE.exec(path)
    if (place !== null && place[1] === port) {
      const base = place[0]
      const inner = path.slice(base.length) || '/'
      // The session is for the dashboard: its pages and the buttons' POSTs, never a read of the API or MCP.
      if (inner.startsWith('/mcp') || (isApi(inner) && c.req.method !== 'POST')) return failure(c, ErrorCode.notFound, `No route ${c.req.method} ${path}.`, `call ${inner} with a bearer token, without ${base}`)
      const cookie = getCookie(c, SESSION_COOKIE)
      const browser: BrowserRequest = { base, principal: cookie === undefined ? undefined : sessionPrincipal(credentials, cookie, port, Date.now(), base) }
      const raw = c.req.raw
      const hasBody = raw.method !== 'GET' && raw.method !== 'HEAD'
      const request = new Request(new URL(`${inner}${url.search}`, url), { method: raw.method, headers: raw.headers, signal: raw.signal, ...(hasBody ? { body: raw.body, duplex: 'half' } : {}) } as RequestInit)
      const answer = await app.fetch(request, { ...(c.env as object), browser })
      if (!(answer.headers.get('content-type') ?? '').startsWith('text/html')) return answer
      const headers = new Headers(answer.headers)
      headers.delete('content-length')
      return new Response(pageAtPlace(await answer.text(), browser), { status: answer.status, headers })
    }

    if (c.req.method === 'GET' && path === '/assets/engram-landing.js') {
      return c.body(LANDING_JS, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
    }
    // A browser navigating to a page here (a typed address, an old bookmark) gets the landing
    // page, which finds its place; programs (a bearer token, or neither header) are answered here.
    // Browsers send Sec-Fetch-Mode only to trustworthy origins (https, loopback); on plain http
    // elsewhere a navigation is told by Upgrade-Insecure-Requests, which no API client sends.
    const mode = c.req.header('sec-fetch-mode')
    const navigating = (mode === 'navigate' || (mode === undefined && c.req.header('upgrade-insecure-requests') === '1')) && c.req.header('authorization') === undefined
    if (navigating && (c.req.method === 'GET' || c.req.method === 'HEAD') && !isApi(path)) {
      return c.html(LANDING_PAGE, 200, { 'Content-Security-Policy': LANDING_CSP, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' })
    }
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
  return allowed ? sessionPrincipal(credentials, cookie, requestPort(c), Date.now()) : undefined
}
