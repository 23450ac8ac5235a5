/**
 * The frame of every dashboard page: head, navigation, who is viewing, and the one stylesheet.
 * Pages pass their body as `hono/html` templates, which escape every interpolated value; raw HTML
 * is never built from memory text. The Content-Security-Policy (set by `createDashboard`) lets no
 * inline script run, so a memory that slipped through escaping still could not execute.
 */
import { html, raw } from 'hono/html'
import type { HtmlEscapedString } from 'hono/utils/html'
import type { Principal } from '../credentials.ts'

/** What the dashboard's templates return. */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>

/** The pages in the navigation, in order: path and label. */
export const NAV: ReadonlyArray<readonly [string, string]> = [
  ['/', 'Overview'],
  ['/memories', 'Memories'],
  ['/edit', 'Edit'],
  ['/why', 'Why'],
  ['/conversations', 'Conversations'],
  ['/activity', 'Activity'],
  ['/consolidation', 'Consolidation'],
  ['/archive', 'Archive'],
  ['/confirmations', 'Confirmations'],
]

/** The Content-Security-Policy of every page: scripts only from this server's own files. */
export const DASHBOARD_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

/** Who is viewing, in words. */
export function viewerLabel(principal: Principal): string {
  if (principal.admin) return 'administrator (every user)'
  return principal.user === undefined ? 'the agent alone' : `user ${principal.user}`
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #667085; --line: #d0d5dd; --bg: #ffffff; --soft: #f4f6f8; --accent: #3451b2; --warn: #b54708; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e7ec; --muted: #98a2b3; --line: #344054; --bg: #101418; --soft: #1a2029; --accent: #8ea2f0; --warn: #f79009; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1.5rem; align-items: baseline; padding: .8rem 1.5rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header h1 { font-size: 1.1rem; margin: 0; }
header nav a { margin-right: 1rem; color: var(--accent); text-decoration: none; }
header nav a[aria-current="page"] { font-weight: 600; text-decoration: underline; }
header .who { margin-left: auto; color: var(--muted); font-size: .9rem; }
main { padding: 1rem 1.5rem 3rem; max-width: 78rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .6rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border-bottom: 1px solid var(--line); }
th { color: var(--muted); font-weight: 500; font-size: .85rem; }
pre, .text { white-space: pre-wrap; word-break: break-word; }
pre { background: var(--soft); padding: .7rem; border-radius: 6px; font-size: .85rem; }
.muted { color: var(--muted); }
ul.plain { margin: 0; padding-left: 1.1rem; }
code { font-size: .92em; }
.warn { color: var(--warn); }
.pill { display: inline-block; padding: 0 .45rem; border: 1px solid var(--line); border-radius: 999px; font-size: .8rem; color: var(--muted); }
form.inline { display: inline; }
input[type=text], input[type=search], textarea, select { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
textarea { width: 100%; min-height: 4rem; }
button { font: inherit; padding: .3rem .8rem; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent); color: var(--bg); cursor: pointer; }
button.secondary { background: transparent; color: var(--accent); }
details { margin: .3rem 0 .3rem 1rem; }
details > summary { cursor: pointer; }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: .7rem 1rem; min-width: 10rem; }
.card b { display: block; font-size: 1.4rem; }
svg text { fill: var(--muted); font-size: 11px; }
.skip { position: absolute; left: -999px; top: .4rem; background: var(--bg); padding: .3rem .6rem; }
.skip:focus { left: .5rem; z-index: 1; }
a:focus-visible, button:focus-visible, summary:focus-visible, select:focus-visible, input:focus-visible, textarea:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.nowrap { white-space: nowrap; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.md > :first-child { margin-top: 0; } .md > :last-child { margin-bottom: 0; } .md p, .md ul, .md ol, .md pre, .md blockquote { margin: .3rem 0; }
.md ul, .md ol { padding-left: 1.3rem; } .md blockquote { border-left: 3px solid var(--line); padding-left: .6rem; color: var(--muted); } .md pre { white-space: pre-wrap; }
.text:has(> .md) { white-space: normal; }
ul.inline-list { list-style: none; padding: 0; display: flex; gap: 1rem; flex-wrap: wrap; }
dl.terms { display: grid; grid-template-columns: auto auto; gap: .1rem .8rem; margin: .3rem 0; font-size: .85rem; } dl.terms dd { margin: 0; font-variant-numeric: tabular-nums; }
`

/** A whole page: `title`, the navigation with `active` marked, who is viewing, and `body`. */
export function page(options: { title: string; agent: string; principal: Principal; active: string; body: Html }): Html {
  const { title, agent, principal, active, body } = options
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · engram · ${agent}</title><style>${raw(STYLE)}</style><script src="/assets/dashboard.js" defer></script></head>
<body>
<a class="skip" href="#content">Skip to the page's content</a>
<header><h1>engram · ${agent}</h1><nav aria-label="Dashboard pages">${NAV.map(([path, label]) => html`<a href="${path}"${path === active ? html` aria-current="page"` : ''}>${label}</a>`)}</nav><span class="who" data-testid="viewer">viewing as ${viewerLabel(principal)}</span></header>
<main id="content" tabindex="-1"><h2>${title}</h2>${body}</main>
</body>
</html>`
}
