/**
 * Facts with a history, through the agent's path (decision 0033): contradiction resolution writes,
 * through the one write path, `superseded_by` / `valid_until` on the old knowledge document and
 * `supersedes` / `valid_from` on its successor. The next maintenance re-indexes the old one; search
 * ranks the successor first and keeps the old one, saying it was superseded and when it held, in
 * search_memory and in priming; `engram history` (a separate process) shows the chain both ways.
 * Two users with the same slugs: one's chain never reaches the other.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { ManualClock } from '../src/core/clock.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

async function engram(temp: TempHome, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args, '--home', temp.home], { env: temp.env, cwd: root })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

const JAN = '2026-01-03T00:00:00.000Z'
const MAY = '2026-05-01T00:00:00.000Z'

/** The same slugs in two users' trees: each one's `home` is superseded by its own `home-2026-05`. */
const PEOPLE = {
  ada: { old: "Ada's apartment is in Lisbon, the city by the river; her apartment in Lisbon has a balcony over the river.", now: "Ada's apartment is in Berlin now, a city she likes." },
  bob: { old: "Bob's apartment is in Porto, the city of bridges; his apartment in Porto looks at the bridges.", now: "Bob's apartment is in Madrid now, a city he likes." },
} as const

async function writeFacts(mind: MindInternals, user: 'ada' | 'bob'): Promise<void> {
  await mind.backend.owned(`user:${user}`).documents.write('knowledge', 'home', { created_at: JAN }, `# Where ${user} lives\n\n${PEOPLE[user].old}\n`)
}

/** What contradiction resolution writes when the newer fact replaces the older one. */
async function supersede(mind: MindInternals, user: 'ada' | 'bob'): Promise<void> {
  const documents = mind.backend.owned(`user:${user}`).documents
  const old = await documents.read('knowledge', 'home')
  assert.ok(old)
  await documents.write('knowledge', 'home-2026-05', { created_at: MAY, supersedes: 'home', valid_from: MAY }, `# Where ${user} lives\n\n${PEOPLE[user].now}\n`)
  await documents.write('knowledge', 'home', { ...old.frontmatter, superseded_by: 'home-2026-05', valid_from: JAN, valid_until: MAY }, old.body, { reason: 'superseded by home-2026-05' })
}

test('a superseded fact ranks right below its successor in search_memory and priming, says so with its interval, stays findable alone, and engram history shows the chain — for its user only', async (t) => {
  const temp = makeTempHome('engram-facts-')
  const clock = new ManualClock('2026-01-03T09:00:00Z')
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock })
  t.after(async () => {
    await mind.close()
    temp.cleanup()
  })
  for (const user of ['ada', 'bob'] as const) await writeFacts(mind, user)
  await mind.maintain()
  const oldUnit = `agents/${mind.agent}/users/ada/knowledge/home.md#0`
  assert.equal((await mind.backend.index.get([oldUnit]))[0]?.meta?.supersededBy, undefined)

  // Four months later, consolidation finds that the apartment moved.
  clock.advanceDays(118)
  for (const user of ['ada', 'bob'] as const) await supersede(mind, user)
  await mind.maintain()
  const reindexed = (await mind.backend.index.get([oldUnit]))[0]
  assert.deepEqual(
    [reindexed?.meta?.supersededBy, reindexed?.meta?.validFrom, reindexed?.meta?.validUntil],
    ['home-2026-05', JAN, MAY],
    'the body did not change: the re-index picked up the new fields through the hash',
  )

  const session = mind.session('ada-asks', { user: 'ada' })
  const turn = await session.begin('Which city is my apartment in, the one by the river?')
  const search = turn.tools.find((tool) => tool.name === 'search_memory')
  assert.ok(search)
  const found = await search.execute({ query: 'which city is my apartment in' })
  assert.ok(found.isError !== true, found.text)
  const lines = found.text.split('\n')
  const berlin = lines.findIndex((line) => line.includes('in Berlin now'))
  const lisbon = lines.findIndex((line) => line.includes('in Lisbon'))
  assert.ok(berlin >= 0 && lisbon >= 0, found.text)
  // The current fact is the first knowledge hit, and the superseded one comes right below it (after its source line).
  assert.equal(lines.findIndex((line) => /^\d+\. \[knowledge/.test(line)), berlin, found.text)
  assert.equal(lisbon, berlin + 2, found.text)
  assert.match(lines[berlin] ?? '', /^\d+\. \[knowledge 2026-05-01\] .*\(supersedes users\/ada\/knowledge\/home\.md; valid from 2026-05-01\)$/)
  assert.match(lines[lisbon] ?? '', /^\d+\. \[knowledge 2026-01-03\] .*\(superseded by users\/ada\/knowledge\/home-2026-05\.md on 2026-05-01; valid 2026-01-03 – 2026-05-01\)$/)
  assert.match(lines[lisbon + 1] ?? '', /^ {3}source: users\/ada\/knowledge\/home\.md \(open with read_memory_file/)
  const data = found.data as { hits: Array<{ source: string; history?: { supersededBy?: string; validUntil?: string } }> }
  assert.deepEqual(data.hits.find((hit) => hit.source.endsWith('/users/ada/knowledge/home.md'))?.history, { supersededBy: 'home-2026-05', validFrom: JAN, validUntil: MAY })
  assert.doesNotMatch(found.text, /Porto|Madrid|users\/bob/, "Bob's chain is not in Ada's search")

  // Priming before the turn: the same order, the same note, pointing as priming points.
  const tree = `agents/${mind.agent}/users/ada/knowledge`
  const primed = turn.system.split('\n')
  const primedBerlin = primed.findIndex((line) => line.includes('in Berlin now'))
  const primedLisbon = primed.findIndex((line) => line.includes('in Lisbon'))
  assert.ok(primedBerlin >= 0 && primedLisbon === primedBerlin + 1, turn.system)
  assert.ok(primed[primedLisbon]?.endsWith(`(-> ${tree}/home.md) (superseded by ${tree}/home-2026-05.md on 2026-05-01; valid 2026-01-03 – 2026-05-01)`), primed[primedLisbon])
  assert.doesNotMatch(turn.system, /Porto|Madrid/)
  await session.end(turn, 'Berlin, since May.')

  // Words only the old fact has: it is still found, as history (its successor, found by meaning if at all, goes first).
  const alone = await search.execute({ query: 'balcony over the river' })
  assert.match(alone.text, /\n\d+\. \[knowledge 2026-01-03\] [^\n]*in Lisbon[^\n]*\(superseded by users\/ada\/knowledge\/home-2026-05\.md on 2026-05-01; valid 2026-01-03 – 2026-05-01\)\n/, alone.text)

  // Bob sees his own chain with the same slugs, never Ada's.
  const bobSession = mind.session('bob-asks', { user: 'bob' })
  const bobTurn = await bobSession.begin('Which city is my apartment in?')
  const bobFound = await bobTurn.tools.find((tool) => tool.name === 'search_memory')?.execute({ query: 'which city is my apartment in' })
  assert.ok(bobFound)
  assert.match(bobFound.text, /in Madrid now.*\n.*\n.*in Porto.*\(superseded by users\/bob\/knowledge\/home-2026-05\.md on 2026-05-01/, bobFound.text)
  assert.doesNotMatch(bobFound.text + bobTurn.system, /Lisbon|Berlin|users\/ada/)
  await bobSession.end(bobTurn, 'Madrid.')

  // mind.history and engram history (another process): the chain both ways, within the owner's tree.
  const history = await mind.history('knowledge/home.md', { user: 'ada' })
  assert.equal(history.path, 'users/ada/knowledge/home.md')
  assert.deepEqual(history.validity, { from: JAN, until: MAY })
  assert.deepEqual(history.supersededBy, [{ path: 'users/ada/knowledge/home-2026-05.md', state: 'live', validFrom: MAY }])
  assert.equal(history.supersedes, undefined)
  const successor = await mind.history('knowledge/home-2026-05.md', { user: 'ada' })
  assert.deepEqual(successor.supersedes, [{ path: 'users/ada/knowledge/home.md', state: 'live', validFrom: JAN, validUntil: MAY }])
  assert.equal((await mind.history('knowledge/home.md', { user: 'bob' })).supersededBy?.[0]?.path, 'users/bob/knowledge/home-2026-05.md')
  await assert.rejects(mind.history('users/ada/knowledge/home.md', { user: 'bob' }), /another user|access|denied/i)

  const human = await engram(temp, ['history', 'knowledge/home-2026-05.md', '--user', 'ada', '--human'])
  assert.equal(human.code, 0, human.stderr)
  assert.match(human.stdout, /users\/ada\/knowledge\/home-2026-05\.md — live \(/)
  assert.match(human.stdout, /fact history, oldest first:\n {2}users\/ada\/knowledge\/home\.md — live; valid 2026-01-03 – 2026-05-01\n {2}users\/ada\/knowledge\/home-2026-05\.md — this document; valid from 2026-05-01\n/, human.stdout)
  const json = await engram(temp, ['history', 'knowledge/home.md', '--user', 'ada', '--json'])
  assert.equal(json.code, 0, json.stderr)
  const envelope = JSON.parse(json.stdout.trim().split('\n').pop() ?? '') as { data: { supersededBy?: Array<{ path: string }>; validity?: unknown } }
  assert.deepEqual(envelope.data.supersededBy?.map((link) => link.path), ['users/ada/knowledge/home-2026-05.md'])
  assert.deepEqual(envelope.data.validity, { from: JAN, until: MAY })
  const asBob = await engram(temp, ['history', 'knowledge/home.md', '--user', 'bob', '--human'])
  assert.equal(asBob.code, 0, asBob.stderr)
  assert.match(asBob.stdout, /users\/bob\/knowledge\/home-2026-05\.md — live; valid from 2026-05-01/)
  assert.doesNotMatch(asBob.stdout, /users\/ada/)
  assert.notEqual((await engram(temp, ['history', 'users/ada/knowledge/home.md', '--user', 'bob', '--json'])).code, 0, "Ada's history is not Bob's to read")
})
