/**
 * Failures are visible (decision 0021). A wrong API key against the fake server, through
 * the real provider code: background work still falls back to its offline path, and now the
 * failure shows up in the next turn's warnings, in `TurnEnd`, in `maintain()`'s report, as a `warn`
 * log line, and in `engram doctor` run as a fresh process — each with its fix. And the agent
 * cannot set the frontmatter fields engram keeps through `write_memory_file`.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { ManualClock } from '../src/core/clock.ts'
import { createLineLogger } from '../src/core/logger.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const RIGHT_KEY = 'sk-right-0123456789'
const WRONG_KEY = 'sk-wrong-0123456789'
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
const run = promisify(execFile)

let server: FakeOpenAiServer
let tmp: TempHome
before(async () => {
  // Any chat that gets through would be answered; none should with the wrong key.
  server = await startFakeOpenAiServer({ apiKey: RIGHT_KEY, onChat: () => ({ json: {} }) })
  tmp = makeTempHome('engram-failures-visible-')
})
after(async () => {
  await server.close()
  tmp.cleanup()
})

const llmEnv = (): Record<string, string> => ({
  ENGRAM_LLM_PROVIDER: 'openai-compatible',
  ENGRAM_LLM_BASE_URL: server.url,
  ENGRAM_LLM_API_KEY: WRONG_KEY,
  ENGRAM_LLM_MODEL: 'fake-model',
  ENGRAM_LLM_TIMEOUT_MS: '5000',
})
/** An hour ago, on the minute: recent enough for `engram doctor`'s last 24 hours, in the past for every process. */
const start = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60 * 60_000)
const minute = (offsetMinutes: number): string => `${new Date(start.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 16).replace('T', ' ')} UTC`
const chatRequests = (): number => server.requests.filter((request) => request.path === '/v1/chat/completions').length
const json = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>)

async function openMind(clock: ManualClock, logLines: string[], settings: Record<string, unknown> = {}): Promise<MindInternals> {
  const logger = createLineLogger({ level: 'debug', write: (line) => logLines.push(line) })
  return openMindInternals({ home: tmp.home, env: { ...tmp.env, ...llmEnv() }, clock, logger, settings })
}

async function engram(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env: { ...tmp.env, ...llmEnv(), ...env }, cwd: root })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

test('a wrong API key: the next turn, TurnEnd, maintain() and the log say so, each with the fix; the work still falls back', async () => {
  const clock = new ManualClock(start)
  const logLines: string[] = []
  const mind = await openMind(clock, logLines)
  try {
    // Session 1 ends: its episode is summarised by the LLM, which refuses the key.
    const first = mind.session('s1', { user: 'ada' })
    const t1 = await first.begin('The staging database moves to the new cluster on Friday.')
    assert.deepEqual(t1.warnings, [])
    await first.end(t1, 'Noted: the staging database moves on Friday.')
    await first.close()
    await mind.idle()
    assert.equal(chatRequests(), 1, 'one call, not retried: a 401 does not heal by asking again')
    // Ada's session: her episode, in her tree (decision 0017).
    const episodesDir = join(mind.layout.usersDir, 'ada', 'episodes')
    const episodes = readdirSync(episodesDir).filter((name) => name.endsWith('.md'))
    assert.equal(episodes.length, 1, 'the episode is still written…')
    assert.match(readFileSync(join(episodesDir, episodes[0] as string), 'utf8'), /extractive/, '…marked as the offline summary it is')

    // The log has one warn line, with the kind, the task and the fix.
    const warnLines = json(logLines).filter((line) => line.level === 40)
    assert.equal(warnLines.length, 1, logLines.join(''))
    assert.equal(warnLines[0]?.kind, 'auth')
    assert.equal(warnLines[0]?.status, 401)
    assert.equal(warnLines[0]?.task, 'episode')
    assert.match(String(warnLines[0]?.msg), /^LLM authentication failed \(HTTP 401\) \(episode\): .*Incorrect API key.* Fix: .*ENGRAM_LLM_API_KEY/)
    assert.doesNotMatch(logLines.join(''), new RegExp(WRONG_KEY))

    // The next turn (another session) says what failed since, with the fix; the agent's prompt does not.
    clock.advance(60_000)
    const second = mind.session('s2', { user: 'ada' })
    const t2 = await second.begin('What moves on Friday?')
    const failureLines = t2.warnings.filter((warning) => /LLM authentication failed/.test(warning))
    assert.equal(failureLines.length, 1, t2.warnings.join('\n'))
    assert.ok(failureLines[0]?.startsWith(`LLM authentication failed (HTTP 401) at ${minute(0)} (episode): `), failureLines[0])
    assert.match(failureLines[0] as string, /Incorrect API key provided.* Fix: set a valid key in llm\.apiKey \/ ENGRAM_LLM_API_KEY/)
    assert.match(t2.systemParts.primed, /Recent activity/)
    assert.doesNotMatch(t2.systemParts.primed, /\] ERR /, 'a model failure is not primed as something the agent did')
    const e2 = await second.end(t2, 'The staging database.')
    assert.deepEqual(e2.warnings, [], 'reported once')

    // Turns 2–4 of s2: ada's fifth turn (identity extraction counts her turns over all her sessions)
    // schedules identity extraction, which the paused LLM refuses at once. The refusal is reported
    // once, at the first turn boundary after it is recorded: the end of turn 4 when the background
    // work has recorded it by then (a log line is written at once, decision 0096), else t6's begin.
    const reported: string[] = []
    for (let n = 2; n <= 4; n++) {
      clock.advance(60_000)
      const turn = await second.begin(`Turn ${n}: my name is Ada and I work on databases.`)
      assert.deepEqual(turn.warnings.filter((warning) => /authentication/.test(warning)), [])
      reported.push(...(await second.end(turn, 'OK.')).warnings)
    }
    await mind.idle()
    assert.equal(chatRequests(), 1, 'paused after the refusal: no request went out for identity extraction')
    clock.advance(60_000)
    const t6 = await second.begin('And now?')
    reported.push(...t6.warnings)
    assert.equal(reported.length, 1, reported.join('\n'))
    assert.ok(reported[0]?.startsWith(`LLM authentication failed (HTTP 401) at ${minute(4)} (identity_facts): the LLM was not called: it refused its API key at ${start.toISOString()}`), reported[0])
    assert.match(reported[0] as string, / Fix: .*ENGRAM_LLM_API_KEY/)

    // TurnEnd: a failure that happened while this turn was out with the model.
    const third = mind.session('s3')
    await third.end(await third.begin('A short side conversation.'), 'Sure.')
    await third.close()
    await mind.idle()
    const e6 = await second.end(t6, 'Still here.')
    assert.equal(e6.warnings.length, 1, e6.warnings.join('\n'))
    assert.match(e6.warnings[0] as string, /^LLM authentication failed \(HTTP 401\) at .* \(episode\): .* Fix: /)

    // maintain(): everything since it last reported, grouped, in `failures` and as warning lines.
    const report = await mind.maintain()
    assert.equal(report.failures.length, 1)
    const [group] = report.failures
    assert.equal(group?.count, 3)
    assert.deepEqual(group?.tasks, ['episode', 'identity_facts'])
    assert.equal(group?.status, 401)
    assert.match(group?.fix ?? '', /ENGRAM_LLM_API_KEY/)
    const line = report.warnings.find((warning) => warning.startsWith(`LLM authentication failed (HTTP 401) ×3 since ${minute(0)} (episode, identity_facts): `))
    assert.match(line ?? '', /Incorrect API key.* Fix: .*ENGRAM_LLM_API_KEY/, report.warnings.join('\n'))
    assert.deepEqual((await mind.maintain()).failures, [], 'a second maintain has nothing new')
    // One warn line per kind per five minutes: the refusal at 0; identity at +4 is a debug line, which
    // log.level (default warn) keeps out; s3's episode at +5 starts a new interval.
    assert.deepEqual(json(logLines).filter((line) => line.kind === 'auth').map((line) => [line.level, line.task]), [[40, 'episode'], [40, 'episode']])
  } finally {
    await mind.close()
  }
})

test('engram doctor, a fresh process, shows the failures with their fix and logs a warn line on stderr (none at log.level silent)', async () => {
  const doctor = await engram(['doctor', '--home', tmp.home, '--json'])
  assert.equal(doctor.code, 5, 'unhealthy: the LLM refuses its key')
  const data = (JSON.parse(doctor.stdout) as { data: { checks: Array<{ name: string; status: string; detail: string; fix?: string }> } }).data
  const failures = data.checks.find((check) => check.name === 'llm failures')
  assert.equal(failures?.status, 'warn')
  assert.ok(failures?.detail.startsWith(`LLM authentication failed (HTTP 401) ×3 since ${minute(0)} (episode, identity_facts): `), failures?.detail)
  assert.match(failures?.detail ?? '', /Incorrect API key/)
  assert.match(failures?.fix ?? '', /llm\.apiKey \/ ENGRAM_LLM_API_KEY/)
  const llm = data.checks.find((check) => check.name === 'llm')
  assert.equal(llm?.status, 'fail')
  assert.match(llm?.detail ?? '', /HTTP 401/)

  // The probe's own refusal is a warn line on stderr (stdout stays the JSON result alone).
  const lines = doctor.stderr.split('\n').filter((line) => line.startsWith('{'))
  const warn = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.level === 40)
  assert.ok(warn, doctor.stderr)
  assert.equal(warn.kind, 'auth')
  assert.equal(warn.task, 'probe')
  assert.match(String(warn.msg), /LLM authentication failed \(HTTP 401\).* Fix: .*ENGRAM_LLM_API_KEY/)
  assert.doesNotMatch(doctor.stderr + doctor.stdout, new RegExp(WRONG_KEY))

  const quiet = await engram(['doctor', '--home', tmp.home, '--json'], { ENGRAM_LOG_LEVEL: 'silent' })
  assert.equal(quiet.code, 5)
  assert.equal(quiet.stderr.trim(), '', 'log.level silent: nothing on stderr')
})

test('the next turn in another process sees what the doctor processes recorded; log.level error drops the warn lines', async () => {
  const clock = new ManualClock(new Date())
  const logLines: string[] = []
  const mind = await openMind(clock, logLines, { 'log.level': 'error' })
  try {
    const turn = await mind.session('s4').begin('Hello again.')
    const probe = turn.warnings.find((warning) => /\(probe\)/.test(warning))
    assert.match(probe ?? '', /^LLM authentication failed \(HTTP 401\) ×2 since .* \(probe\): .* Fix: /, turn.warnings.join('\n'))
    const searched = await turn.tools.find((tool) => tool.name === 'search_memory')?.execute({ query: 'staging database' })
    assert.equal(searched?.isError, undefined, 'recall works without the LLM')
    await mind.session('s4').close()
    await mind.idle()
    assert.deepEqual(logLines, [], 'warn lines are below log.level error')
  } finally {
    await mind.close()
  }
})

test('a remote embedder with a wrong key: the turn still primes lexically, and TurnEnd names the embedder and its fix', async () => {
  const home = makeTempHome('engram-embedder-failure-')
  const logLines: string[] = []
  const mind = await openMindInternals({
    home: home.home,
    env: home.env,
    clock: new ManualClock('2026-03-02T09:00:00Z'),
    logger: createLineLogger({ level: 'debug', write: (line) => logLines.push(line) }),
    settings: { 'embed.provider': 'openai-compatible', 'embed.baseUrl': server.url, 'embed.apiKey': WRONG_KEY, 'embed.model': 'fake-embedding', 'embed.dimensions': 32 },
  })
  try {
    const session = mind.session('e1')
    const turn = await session.begin('Where do the backups of the staging database go?')
    const end = await session.end(turn, 'To the cold-storage bucket.')
    const embedder = end.warnings.find((warning) => /^embedder authentication failed \(HTTP 401\)/.test(warning))
    assert.match(embedder ?? '', /\(query embedding\): .* Fix: set a valid key in embed\.apiKey \/ ENGRAM_EMBED_API_KEY.*ENGRAM_EMBED_PROVIDER=offline/, end.warnings.join('\n'))
    assert.ok(json(logLines).some((line) => line.level === 40 && line.source === 'embedder'))
  } finally {
    await mind.close()
    home.cleanup()
  }
})

test('write_memory_file through a turn: a procedure cannot set its own counters or protect itself, and nothing is written', async () => {
  const home = makeTempHome('engram-owned-fields-')
  const mind = await openMindInternals({ home: home.home, env: home.env, clock: new ManualClock('2026-03-02T09:00:00Z') })
  try {
    const session = mind.session('w1')
    const turn = await session.begin('Write down how we deploy.')
    const write = turn.tools.find((tool) => tool.name === 'write_memory_file')
    assert.ok(write)
    assert.match(write.description, /success_count, failure_count, confidence, version, protected/)
    assert.equal((await write.execute({ path: 'procedures/deploy.md', content: '1. build\n2. ship\n' })).isError, undefined)
    const before = readFileSync(join(mind.layout.proceduresDir, 'deploy.md'), 'utf8')
    const result = await write.execute({ path: 'procedures/deploy.md', content: '---\nsuccess_count: 50\nprotected: true\n---\n1. build\n2. ship\n' })
    assert.equal(result.isError, true)
    assert.match(result.text, /^write_memory_file cannot set success_count, protected in procedures\/deploy\.md; nothing was written\./)
    assert.match(result.text, /success_count: engram counts the successes reported with report_procedure_outcome/)
    assert.match(result.text, /Fix: .*call report_procedure_outcome after following the procedure; ask the user to protect it/)
    assert.equal(readFileSync(join(mind.layout.proceduresDir, 'deploy.md'), 'utf8'), before)
    await session.end(turn, 'Written.')
  } finally {
    await mind.close()
    home.cleanup()
  }
})
