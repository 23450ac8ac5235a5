// @slow: 16 clients against a real server for seconds, then SIGTERM mid-flight
/**
 * `engram serve` under load, through real sockets (decision 0038): the real server in a child process
 * on a temp home, tokens for four users, 16 clients at once beginning and ending turns, searching
 * and memorizing for three seconds while the maintenance schedule runs every second. No request
 * fails, and every acknowledged memory and turn is there — found by search, and after a restart.
 * Then SIGTERM while the clients are mid-flight: the server exits 0, every request it answered 2xx
 * is there after restarting it on the same home, and the requests it refused after the signal are
 * counted. A schedule that is not a cron pattern stops the server at start.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { after, before, describe, test } from 'node:test'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { type EndedTurn, type LoadRun, type Memorized, runClients, type ServeUser } from './support/serve-clients.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'

const USERS: ServeUser[] = ['ada', 'bob', 'cyd', 'dee'].map((user) => ({ user, token: `${user}-load-token-0123456789` }))
const CLIENTS = 16
const AGENT_TOKEN = 'agent-load-token-0123456789'

/** The memorized lessons the server cannot find by their tag, searching as their user. */
async function missingFromSearch(address: string, memorized: readonly Memorized[]): Promise<string[]> {
  const missing: string[] = []
  const queue = [...memorized]
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const response = await fetch(`${address}/v1/search`, {
          method: 'POST',
          headers: { authorization: `Bearer ${next.user.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: next.tag, kinds: ['lesson'], limit: 5 }),
        })
        const body = (await response.json()) as { hits?: Array<{ text: string }> }
        if (response.status !== 200 || !body.hits?.some((hit) => hit.text === next.text)) missing.push(`${next.user.user}: ${next.text}`)
      }
    }),
  )
  return missing
}

/** The acknowledged turns whose stored message, provenance or (ended ones) reply is not in the home. */
async function missingTurns(temp: TempHome, turns: readonly EndedTurn[]): Promise<string[]> {
  const mind = await openMindInternals({ home: temp.home, env: temp.env })
  try {
    const missing: string[] = []
    for (const turn of turns) {
      const stored = await mind.turnProvenance({ sessionId: turn.session, turn: turn.turn })
      const label = `${turn.session}#${turn.turn} (${turn.user.user}, ${turn.ended ? 'ended' : 'begun'})`
      if (!stored || stored.user !== turn.user.user) {
        missing.push(`${label}: no stored turn of this user`)
        continue
      }
      const [message] = await mind.backend.context.messagesById([stored.messageId])
      if (!message?.content.includes(turn.tag)) missing.push(`${label}: its message is not stored`)
      if (turn.ended) {
        const replies = await mind.backend.context.messagesById(stored.replyIds)
        if (!replies.some((reply) => reply.content.includes(turn.tag))) missing.push(`${label}: its reply is not stored`)
      }
    }
    return missing
  } finally {
    await mind.close()
  }
}

function tally(run: LoadRun): { ok: number; refused: number; failed: number } {
  let ok = 0
  let refused = 0
  let failed = 0
  for (const outcome of run.outcomes) {
    if (outcome.status === 'refused') refused++
    else if (outcome.status >= 200 && outcome.status < 300) ok++
    else failed++
  }
  return { ok, refused, failed }
}

describe('engram serve under load', { timeout: 120_000 }, () => {
  let temp: TempHome
  let env: Record<string, string>
  let server: ServeProcess | undefined
  const earlier: { memorized: Memorized[]; turns: EndedTurn[] } = { memorized: [], turns: [] }

  before(() => {
    temp = makeTempHome('engram-serve-load-')
    env = {
      ...temp.env,
      ENGRAM_SERVE_TOKENS: [...USERS.map(({ user, token }) => `${token}=default:${user}`), `${AGENT_TOKEN}=default`].join(','),
      // Maintenance every second, so that it runs while the clients do and when the signal comes.
      ENGRAM_SERVE_MAINTAIN: '* * * * * *',
    }
  })
  after(async () => {
    await server?.stop('SIGKILL')
    temp.cleanup()
  })

  test('16 clients for 3 s: every request answered 2xx, every memory found, every turn stored, after a restart too', async (t) => {
    server = await startServe({ home: temp.home, env, killAfterMs: 90_000 })
    // Three seconds, and on a machine too busy for it, until every client has had its turn at memorize.
    const deadline = performance.now() + 3_000
    const bound = performance.now() + 30_000
    let memorized = 0
    const running = () => performance.now() < deadline || (memorized < 2 * CLIENTS && performance.now() < bound)
    const run = await runClients({ address: server.address, users: USERS, clients: CLIENTS, running, run: 'load', onProgress: (soFar) => (memorized = soFar.memorized.length) })
    const counts = tally(run)
    t.diagnostic(`${run.outcomes.length} requests (${counts.ok} 2xx), ${run.memorized.length} lessons, ${run.turns.length} turns`)
    assert.deepEqual(run.failures, [])
    assert.equal(counts.ok, run.outcomes.length)
    assert.ok(run.memorized.length >= CLIENTS, `lessons memorized under load (${run.memorized.length})`)
    assert.ok(run.turns.every((turn) => turn.ended))
    assert.deepEqual(await missingFromSearch(server.address, run.memorized), [], 'every memorized lesson is found while the server runs')
    // The schedule ran maintenance meanwhile: on a new home the daily, weekly and monthly runs are
    // due (with nothing to do yet), and nothing but maintenance runs them.
    // On a loaded machine the three may still be running when the clients stop: the status is read
    // again until each has a last run, for as long as 30 s.
    type Jobs = { failed: unknown[]; consolidation: Record<string, { at?: string; status: string }> }
    const ran = (jobs: Jobs) => ['daily', 'weekly', 'monthly'].every((period) => {
      const last = jobs.consolidation[`consolidation-${period}`]
      return last?.at !== undefined && ['done', 'skipped'].includes(last.status)
    })
    const address = server.address
    const readStatus = async () => ((await (await fetch(`${address}/v1/status`, { headers: { authorization: `Bearer ${AGENT_TOKEN}` } })).json()) as { status: { jobs: Jobs } }).status.jobs
    let jobs = await readStatus()
    for (const until = performance.now() + 30_000; !ran(jobs) && performance.now() < until; jobs = await readStatus()) await new Promise((resolve) => setTimeout(resolve, 250))
    assert.ok(ran(jobs), JSON.stringify(jobs))
    const status = { status: { jobs } }
    assert.deepEqual(status.status.jobs.failed, [])

    assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
    assert.match(server.stderr(), /stopped \(SIGTERM\)/)
    assert.doesNotMatch(server.stderr(), /maintenance failed/)
    server = await startServe({ home: temp.home, env, killAfterMs: 90_000 })
    assert.deepEqual(await missingFromSearch(server.address, run.memorized), [], 'and after a restart')
    assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
    assert.deepEqual(await missingTurns(temp, run.turns), [])
    earlier.memorized.push(...run.memorized)
    earlier.turns.push(...run.turns)
  })

  test('SIGTERM while 16 clients are mid-flight: exit 0, every 2xx answer kept, the refused ones counted', async (t) => {
    server = await startServe({ home: temp.home, env, killAfterMs: 90_000 })
    const serving = server
    // The signal comes once every client has memorized twice, while they all go on sending.
    let signalledAt = Number.POSITIVE_INFINITY
    const signal = (run: LoadRun) => {
      if (signalledAt !== Number.POSITIVE_INFINITY || run.memorized.length < 2 * CLIENTS) return
      signalledAt = performance.now()
      void serving.stop('SIGTERM')
    }
    // The clients stop at their first request without an answer; the deadline is only a bound.
    const bound = performance.now() + 30_000
    const run = await runClients({ address: serving.address, users: USERS, clients: CLIENTS, running: () => performance.now() < bound, stopOnRefused: true, run: 'term', onProgress: signal })
    assert.ok(signalledAt < bound, 'the signal was sent')
    assert.equal(await serving.exited, 0, serving.stderr())
    assert.match(serving.stderr(), /stopped \(SIGTERM\)/)
    assert.doesNotMatch(serving.stderr(), /maintenance failed|still open after/)

    const counts = tally(run)
    // A request sent just before the signal may reach the server as it closes; none fails before.
    const refusedBefore = run.outcomes.filter((outcome) => outcome.status === 'refused' && outcome.sentAt + outcome.ms < signalledAt).length
    const answeredAfter = run.outcomes.filter((outcome) => outcome.status !== 'refused' && outcome.sentAt >= signalledAt).length
    t.diagnostic(`${run.outcomes.length} requests: ${counts.ok} answered 2xx (${answeredAfter} of them sent after the signal), ${counts.refused} refused after the signal (${run.outcomes.filter((outcome) => outcome.status === 'refused' && outcome.sentAt < signalledAt).length} of them sent before it); ${run.memorized.length} lessons, ${run.turns.length} turns (${run.turns.filter((turn) => turn.ended).length} ended)`)
    assert.equal(counts.failed, 0, run.failures.join('\n'))
    assert.equal(refusedBefore, 0, `nothing fails before the signal:\n${run.failures.join('\n')}`)
    assert.equal(counts.refused, CLIENTS, 'each client stopped at exactly one request without an answer, after the signal')
    assert.ok(run.memorized.length > 0 && run.turns.length > 0)

    // Everything answered 2xx — in this run and the one before — is there after a restart.
    server = await startServe({ home: temp.home, env, killAfterMs: 90_000 })
    assert.deepEqual(await missingFromSearch(server.address, [...earlier.memorized, ...run.memorized]), [])
    assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
    assert.deepEqual(await missingTurns(temp, [...earlier.turns, ...run.turns]), [])
  })
})

test('a maintenance schedule that is not a cron pattern stops engram serve at start, naming the setting and the fix', { timeout: 60_000 }, async (t) => {
  const temp = makeTempHome('engram-serve-cron-')
  t.after(() => temp.cleanup())
  const bin = join(resolve(import.meta.dirname, '..'), 'src/interfaces/cli/bin.ts')
  const failed = await promisify(execFile)(process.execPath, [bin, 'serve', '--home', temp.home, '--port', '0', '--json'], { env: { ...temp.env, ENGRAM_SERVE_MAINTAIN: 'every five minutes' }, timeout: 30_000 }).then(
    () => assert.fail('engram serve started with a bad schedule'),
    (error: { code: number; stdout: string }) => error,
  )
  assert.notEqual(failed.code, 0)
  const answer = JSON.parse(failed.stdout) as { ok: boolean; error: { code: string; message: string; fix: string } }
  assert.equal(answer.ok, false)
  assert.equal(answer.error.code, 'config_invalid')
  assert.match(answer.error.message, /serve\.maintain "every five minutes" is not a cron pattern/)
  assert.match(answer.error.fix, /ENGRAM_SERVE_MAINTAIN/)
  assert.doesNotMatch(failed.stdout, /listening/)
  // The tests' own start-up says why when the server does not start, whichever process failed and
  // wherever it wrote (with --json, a failure is an envelope on stdout).
  await assert.rejects(startServe({ home: temp.home, env: { ...temp.env, ENGRAM_SERVE_MAINTAIN: 'every five minutes' }, killAfterMs: 30_000 }), /exited 3 before listening:[\s\S]*is not a cron pattern/)
})
