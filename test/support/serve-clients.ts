/**
 * Clients of `engram serve` over real HTTP, for the load test and `npm run bench -- serve`: each
 * client acts for one user (its bearer token) and, until told to stop, begins a turn, searches,
 * ends the turn and every other round memorizes a lesson. Every request is timed and recorded;
 * what the server acknowledged (a 2xx answer) is listed, so a caller can check that all of it is
 * there afterwards.
 *
 * Every text carries a tag of letters only (`zqb…`), unique to its client and round, which the
 * search index keeps as one term: searching for the tag finds exactly that memory.
 *
 * A busy server's refusal (503 with Retry-After, decision 0089) is recorded as `busy` and the
 * request sent again after the time it names, while the run goes on.
 */
import { setTimeout as sleep } from 'node:timers/promises'

export interface ServeUser {
  user: string
  token: string
}

export type Route = 'turns/begin' | 'turns/end' | 'memorize' | 'search'
export const ROUTES: readonly Route[] = ['turns/begin', 'search', 'turns/end', 'memorize']

export interface Outcome {
  route: Route
  ms: number
  /** The HTTP status, or `refused` when no answer came (connection refused or reset, timeout). */
  status: number | 'refused'
  /** When it was sent (performance.now()). */
  sentAt: number
  /** A busy server's refusal (503 with Retry-After): the client waited as told and sent it again. */
  busy?: boolean
}

export interface Memorized {
  user: ServeUser
  tag: string
  text: string
}

export interface EndedTurn {
  user: ServeUser
  session: string
  turn: number
  tag: string
  /** The end was acknowledged too (otherwise only the beginning was). */
  ended: boolean
}

/** One request: the answer's status and JSON body (and Retry-After), or `refused` (and `{}`) when none came. */
export type Send = (route: Route, user: ServeUser, body: Record<string, unknown>) => Promise<{ status: number | 'refused'; json: Record<string, unknown>; retryAfterS?: number }>

export interface LoadRun {
  outcomes: Outcome[]
  /** Lessons the server said it saved. */
  memorized: Memorized[]
  /** Turns the server said it began (and, when `ended`, ended). */
  turns: EndedTurn[]
  /** The first answers that were not 2xx, or the errors of refused requests, for the message of a failed assertion. */
  failures: string[]
}

const WORDS = 'invoice ledger staging vault cache quota batch refund payroll backup mirror cluster rollout budget audit'.split(' ')

/** Letters only, so the search index keeps it as one term (`run` is letters too). */
function tagOf(run: string, client: number, round: number): string {
  const letters = (n: number) => {
    let text = ''
    do {
      text = String.fromCharCode(97 + (n % 26)) + text
      n = Math.floor(n / 26)
    } while (n > 0)
    return text
  }
  return `zq${run}${letters(client)}x${letters(round)}v`
}

/**
 * Runs `clients` clients against `address` until `running()` says no. A request that gets no
 * answer stops its client when `stopOnRefused` (the server is going away), is recorded either way.
 */
export async function runClients(options: {
  address: string
  /** How a request travels; HTTP to `address` unless given (the bench's in-process baseline). */
  send?: Send
  users: readonly ServeUser[]
  clients: number
  running: () => boolean
  stopOnRefused?: boolean
  /** Distinguishes the sessions and tags of several runs on one home (letters only). */
  run?: string
  /** Called after every request with the run so far. */
  onProgress?: (run: LoadRun) => void
}): Promise<LoadRun> {
  const result: LoadRun = { outcomes: [], memorized: [], turns: [], failures: [] }
  const run = options.run ?? 'r'

  const overHttp: Send = async (route, user, body) => {
    try {
      const response = await fetch(`${options.address}/v1/${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      })
      const retryAfter = response.headers.get('retry-after')
      return { status: response.status, json: (await response.json()) as Record<string, unknown>, ...(retryAfter !== null ? { retryAfterS: Number(retryAfter) } : {}) }
    } catch (error) {
      if (result.failures.length < 10) result.failures.push(`${route} refused: ${(error as Error).message}${(error as Error).cause ? ` (${String((error as Error).cause)})` : ''}`)
      return { status: 'refused', json: {} }
    }
  }
  const send = options.send ?? overHttp

  async function request(route: Route, user: ServeUser, body: Record<string, unknown>): Promise<{ status: number | 'refused'; json: Record<string, unknown> }> {
    for (;;) {
      const sentAt = performance.now()
      const answer = await send(route, user, body)
      // A busy server (503 with Retry-After): counted apart, and sent again when it said, as a well-behaved client does.
      if (answer.status === 503 && answer.retryAfterS !== undefined) {
        result.outcomes.push({ route, ms: performance.now() - sentAt, status: answer.status, sentAt, busy: true })
        if (!options.running()) return answer
        await sleep(answer.retryAfterS * 1000)
        continue
      }
      result.outcomes.push({ route, ms: performance.now() - sentAt, status: answer.status, sentAt })
      return recorded(route, answer)
    }
  }
  function recorded(route: Route, answer: { status: number | 'refused'; json: Record<string, unknown> }): { status: number | 'refused'; json: Record<string, unknown> } {
    if (typeof answer.status === 'number' && answer.status >= 300 && result.failures.length < 10) result.failures.push(`${route} ${answer.status}: ${JSON.stringify(answer.json)}`)
    return answer
  }
  const ok = (status: number | 'refused') => typeof status === 'number' && status >= 200 && status < 300
  const stop = (status: number | 'refused') => status === 'refused' && options.stopOnRefused === true

  async function client(index: number): Promise<void> {
    const user = options.users[index % options.users.length] as ServeUser
    let lastTag: string | undefined
    for (let round = 0; options.running(); round++) {
      const tag = tagOf(run, index, round)
      const word = WORDS[(index + round) % WORDS.length] as string
      const session = `${run}-c${index}-s${Math.floor(round / 20)}`
      // A host that reads the turn's number and prompt, not its provenance: the compact answer.
      const begun = await request('turns/begin', user, { session, message: `${tag}: what do we know about the ${word} of ${tag}?`, compact: true })
      if (stop(begun.status)) return
      const turn = ok(begun.status) ? ((begun.json.turn as { number: number }).number as number) : undefined
      const entry: EndedTurn | undefined = turn === undefined ? undefined : { user, session, turn, tag, ended: false }
      if (entry) result.turns.push(entry)

      const searched = await request('search', user, { query: lastTag ?? `${word} ${tag}`, limit: 5 })
      if (stop(searched.status)) return

      if (turn !== undefined && entry) {
        const ended = await request('turns/end', user, { session, turn, reply: `${tag}: the ${word} is noted, round ${round}.` })
        if (ok(ended.status)) entry.ended = true
        if (stop(ended.status)) return
      }

      if (round % 2 === 0) {
        const text = `${tag}: the ${word} of client ${index} needs its ${WORDS[(round * 7) % WORDS.length]} checked in round ${round}.`
        const saved = await request('memorize', user, { entries: [{ text, kind: 'lesson' }] })
        if (ok(saved.status)) {
          const report = saved.json.report as { saved: unknown[] }
          if (report.saved.length === 1) result.memorized.push({ user, tag, text })
          else if (result.failures.length < 10) result.failures.push(`memorize of ${tag} answered 2xx without saving: ${JSON.stringify(report)}`)
        }
        options.onProgress?.(result)
        lastTag = tag
        if (stop(saved.status)) return
      }
    }
  }

  await Promise.all(Array.from({ length: options.clients }, (_, index) => client(index)))
  return result
}

/** The `p`-th quantile (0–1) of the samples, nearest rank. */
export function quantile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number
}
