/**
 * A real headless Chromium for the dashboard's browser tests: Debian's `chromium` (installed by
 * `scripts/run.sh test` when missing) driven by playwright-core, which downloads no browser of
 * its own. A watchdog kills the browser when a test passes its deadline, so a hung page fails the
 * test instead of hanging the run; screenshots go to `test-output/screenshots/` (git-ignored,
 * emptied on every run) for a person to look at.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { type Browser, type BrowserContext, type BrowserServer, chromium, type Locator, type Page, type Response } from 'playwright-core'

/** Where Debian's package puts it; `scripts/run.sh test` installs it there. */
const CHROMIUM = '/usr/bin/chromium'

/**
 * No sandbox (the tests run as root in a container), no GPU, and none of the browser's own
 * network traffic (updates, sync, QUIC probes) — the pages under test are the only requests.
 */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']

export const SCREENSHOT_DIR = resolve(import.meta.dirname, '../../test-output/screenshots')

export interface TestBrowser {
  browser: Browser
  /** A new incognito context (its own cookies) with one page, actions bounded by `actionTimeoutMs`. */
  newPage(): Promise<{ context: BrowserContext; page: Page; problems: string[] }>
  /** Stop the watchdog and the browser. Safe to call twice. */
  close(): Promise<void>
}

export interface LaunchOptions {
  /** The whole test's budget: past it the browser is killed and every pending action fails with why. */
  deadlineMs: number
  /** One action's or navigation's bound (default 10 s). */
  actionTimeoutMs?: number
}

/**
 * Launch Chromium with its watchdog. The screenshot folder is never emptied: several browser tests
 * write into it in one run, each under its own names, and a later test must not delete an earlier's.
 */
export async function launchBrowser(options: LaunchOptions): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    const why = process.env.ENGRAM_TEST_CHROMIUM_ERROR
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM}, and it is not there${why ? ` (${why})` : ''}. ` +
        'Fix: run `npm test` as root (it installs Debian\'s chromium), or `apt-get install -y chromium` yourself.',
    )
  }
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  // A server rather than launch(): it exposes the process, which the watchdog can kill outright.
  const server: BrowserServer = await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true })
  let browser: Browser
  try {
    browser = await chromium.connect(server.wsEndpoint())
  } catch (error) {
    await server.kill()
    throw error
  }
  const actionTimeoutMs = options.actionTimeoutMs ?? 10_000
  let closed = false
  const watchdog = setTimeout(() => {
    const reason = `the browser test passed its ${Math.round(options.deadlineMs / 1000)} s deadline; the watchdog killed Chromium`
    process.stderr.write(`[browser] ${reason}\n`)
    void browser.close({ reason }).catch(() => undefined)
    void server.kill()
  }, options.deadlineMs)
  return {
    browser,
    async newPage() {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
      context.setDefaultTimeout(actionTimeoutMs)
      context.setDefaultNavigationTimeout(actionTimeoutMs)
      const page = await context.newPage()
      return { context, page, problems: watchProblems(page) }
    },
    async close() {
      if (closed) return
      closed = true
      clearTimeout(watchdog)
      await browser.close().catch(() => undefined)
      await server.close().catch(() => server.kill())
    },
  }
}

/**
 * What went wrong in the page, as a person would see it in the developer tools: uncaught errors,
 * console errors (a script the CSP blocked among them), failed requests and error answers of
 * anything but the page itself (a navigation's status is the test's to check), each one line.
 * The favicon Chromium asks for on its own is not the dashboard's request.
 */
function watchProblems(page: Page): string[] {
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`${page.url()}: uncaught ${error.name}: ${error.message}`))
  page.on('console', (message) => {
    // "Failed to load resource" repeats an error answer, reported below with its address.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`${page.url()}: console error: ${message.text()}`)
  })
  const ours = (url: string) => !url.endsWith('/favicon.ico')
  page.on('requestfailed', (request) => {
    // A navigation superseded by the next one is aborted, and no person sees it: the landing page's
    // script replaces the address with the dashboard's place while the landing page may still be
    // loading (browser-session.ts). Whether the page the test went to opened is the test's to check.
    if (request.isNavigationRequest() && request.failure()?.errorText === 'net::ERR_ABORTED') return
    if (ours(request.url())) problems.push(`${page.url()}: request failed: ${request.method()} ${request.url()} (${request.failure()?.errorText ?? 'unknown'})`)
  })
  page.on('response', (response) => {
    const request = response.request()
    if (response.status() >= 400 && !request.isNavigationRequest() && ours(request.url())) problems.push(`${page.url()}: ${request.method()} ${request.url()} answered ${response.status()}`)
  })
  return problems
}

/** A full-page PNG at `test-output/screenshots/<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOT_DIR, `${name.replace(/[^a-z0-9-]+/gi, '-')}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/**
 * The text of `locator` as a person reads it on the screen: rendered, hidden parts left out (a
 * closed `<details>`'s body among them), which `textContent` would include.
 */
export function shownText(locator: Locator, options?: { timeout?: number }): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's rendered text is what these tests check, not the DOM's
  return locator.innerText(options)
}

/** `shownText` of each element `locator` matches, in order. */
export function shownTexts(locator: Locator): Promise<string[]> {
  return locator.allInnerTexts()
}

/**
 * Type `url` into the address bar, as a person does: the landing page of a typed address (it names
 * no place, decision 0051) goes on to the page at the browser's place; that answer is returned,
 * the page loaded.
 */
export async function typeAddress(page: Page, url: string): Promise<Response> {
  const atPlace = page.waitForResponse((response) => response.request().isNavigationRequest() && response.frame() === page.mainFrame() && /^\/engram-\d+-/.test(new URL(response.url()).pathname))
  await page.goto(url)
  const response = await atPlace
  await page.waitForLoadState('load')
  return response
}
