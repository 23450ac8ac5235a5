/**
 * A home written by wave 1 (before owners: schema version 2, per-user-per-agent notes in
 * `ctx_agent_memory`, every event and episode in the agent's own tree) opened by today's engram:
 * two `engram status` processes at once migrate it exactly once (decision 0024), status reports
 * who owns what and what was assigned, and a user's session no longer sees another user's past.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { ManualClock } from '../src/core/clock.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import type { MindStatus } from '../src/memory/status.ts'
import { MIGRATIONS } from '../src/storage/sqlite/migrations.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

async function status(tmp: TempHome, format: '--json' | '--human'): Promise<{ stdout: string; stderr: string }> {
  // At log level info the process that migrates says so on stderr.
  return run(process.execPath, [bin, 'status', '--home', tmp.home, format], { env: { ...tmp.env, ENGRAM_LOG_LEVEL: 'info' }, cwd: root })
}

const DAY = '2026-03-01'
const ACTIVITY = [
  { ts: `${DAY}T09:00:00.000Z`, type: 'message_received', content: 'Please deploy staging, my token is SECRET-ADA', from: 'ada', session: 'chat-ada' },
  { ts: `${DAY}T09:00:05.000Z`, type: 'tool_use', content: 'deployed', tool: 'shell', session: 'chat-ada', meta: { input: 'deploy staging', result: 'deployed', ok: true } },
  { ts: `${DAY}T09:00:09.000Z`, type: 'response_sent', content: 'Deployed.', to: 'ada', session: 'chat-ada' },
  { ts: `${DAY}T09:30:00.000Z`, type: 'heartbeat_start', summary: 'patrol' },
  { ts: `${DAY}T09:40:00.000Z`, type: 'message_received', content: 'What is for lunch? BOB-LUNCH', from: 'bob', session: 'chat-bob' },
  { ts: `${DAY}T09:50:00.000Z`, type: 'message_received', content: 'anonymous hello', session: 'chat-anon' },
  { ts: `${DAY}T09:55:00.000Z`, type: 'message_received', content: 'Ada again, on a channel without a session', from: 'ada' },
  { ts: `${DAY}T09:56:00.000Z`, type: 'message_received', content: 'a stranger writes', from: 'carol' },
].map((event) => JSON.stringify(event))
const CUT_LINE = '{"ts":"2026-03-01T09:59:00.000Z","type":"message_rec'

const marker = (session: string, untilTs: string) =>
  `<!-- episode ${JSON.stringify({ session, turns: [1, 1], from: `activity/${DAY}.jsonl#L1`, until: `activity/${DAY}.jsonl#L3`, untilTs, method: 'extractive', recorded: `${DAY}T09:20:00.000Z` })} -->`
const ADA_SECTION = `## 09:00 — Deployed staging for Ada\n\nAda asked for a staging deploy; the agent ran it.\n\n${marker('chat-ada', `${DAY}T09:00:09.000Z`)}`
const ANON_SECTION = `## 09:50 — An anonymous hello\n\nSomeone said hello.\n\n${marker('chat-anon', `${DAY}T09:50:00.000Z`)}`
const HAND_SECTION = '## Notes by hand\n\nThe agent keeps its own notes here.'

/** The home exactly as wave 1 left it: schema version 2, its rows and its files. */
function writeWaveOneHome(home: string): void {
  mkdirSync(home, { recursive: true })
  const db = new DatabaseSync(join(home, 'engram.db'))
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)')
  for (const migration of MIGRATIONS.filter((m) => m.version <= 2)) {
    db.exec(migration.sql)
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(migration.version, migration.name, '2026-02-01T00:00:00.000Z')
  }
  const conversation = db.prepare('INSERT INTO ctx_conversations (id, session_id, agent_id, user_id, created_at) VALUES (?, ?, ?, ?, ?)')
  conversation.run(1, 'chat-ada', 'default', 'ada', `${DAY}T09:00:00.000Z`)
  conversation.run(2, 'chat-bob', 'default', 'bob', `${DAY}T09:40:00.000Z`)
  conversation.run(3, 'chat-anon', 'default', null, `${DAY}T09:50:00.000Z`)
  db.prepare("INSERT INTO ctx_messages (id, conversation_id, seq, role, name, content, token_count, created_at) VALUES (1, 1, 1, 'user', 'ada', ?, 12, ?)").run(
    'Please deploy staging, my token is SECRET-ADA',
    `${DAY}T09:00:00.000Z`,
  )
  db.prepare('INSERT INTO ctx_items (conversation_id, position, message_id) VALUES (1, 1, 1)').run()
  db.prepare(
    "INSERT INTO index_units (id, kind, text, source, agent, user_id, created_at, hash) VALUES ('msg:1', 'message', 'Please deploy staging, my token is SECRET-ADA', 'conv:1', 'default', 'ada', ?, 'h1')",
  ).run(`${DAY}T09:00:00.000Z`)
  const notes = db.prepare('INSERT INTO ctx_agent_memory (user_id, agent_id, content, updated_at) VALUES (?, ?, ?, ?)')
  notes.run('ada', 'default', 'Prefers short answers.\nLives in Oslo.', `${DAY}T08:00:00.000Z`)
  notes.run('ada', 'helper', 'Works nights.', `${DAY}T08:00:00.000Z`)
  notes.run('bob', 'default', '   ', `${DAY}T08:00:00.000Z`)
  notes.run('bad\u0001id', 'default', 'unreachable', `${DAY}T08:00:00.000Z`)
  db.close()

  const agent = join(home, 'agents', 'default')
  mkdirSync(join(agent, 'activity'), { recursive: true })
  writeFileSync(join(agent, 'activity', `${DAY}.jsonl`), `${[...ACTIVITY, CUT_LINE].join('\n')}\n`)
  mkdirSync(join(agent, 'episodes'), { recursive: true })
  writeFileSync(join(agent, 'episodes', `${DAY}.md`), `# ${DAY}\n\n${ADA_SECTION}\n\n${ANON_SECTION}\n\n${HAND_SECTION}\n`)
  mkdirSync(join(home, 'shared', 'users'), { recursive: true })
  writeFileSync(join(home, 'shared', 'users', 'ada.md'), '# Ada\n\n- Timezone: CET\n')
  writeFileSync(
    join(home, 'shared', 'resolutions.jsonl'),
    `${[
      { id: 'r1', ts: `${DAY}T09:20:00.000Z`, agent: 'default', issue: 'staging deploy fails', session: 'chat-ada', episode: `episodes/${DAY}.md#09:00` },
      { id: 'r2', ts: `${DAY}T09:51:00.000Z`, agent: 'default', issue: 'hello unanswered', session: 'chat-anon', episode: `episodes/${DAY}.md#09:50` },
    ]
      .map((record) => JSON.stringify(record))
      .join('\n')}\n`,
  )
}

function read(...path: string[]): string {
  return readFileSync(join(...path), 'utf8')
}

function snapshot(home: string) {
  const agent = join(home, 'agents', 'default')
  return {
    agentActivity: read(agent, 'activity', `${DAY}.jsonl`),
    adaActivity: read(agent, 'users', 'ada', 'activity', `${DAY}.jsonl`),
    bobActivity: read(agent, 'users', 'bob', 'activity', `${DAY}.jsonl`),
    agentEpisodes: read(agent, 'episodes', `${DAY}.md`),
    adaEpisodes: read(agent, 'users', 'ada', 'episodes', `${DAY}.md`),
    profile: read(home, 'shared', 'users', 'ada.md'),
    resolutions: read(home, 'shared', 'resolutions.jsonl'),
  }
}

test('a wave-1 home: two processes open it at once, it is migrated once, status says what was assigned', async (t) => {
  const tmp = makeTempHome('engram-owners-migration-')
  t.after(tmp.cleanup)
  writeWaveOneHome(tmp.home)

  const [first, second] = await Promise.all([status(tmp, '--json'), status(tmp, '--json')])
  const reports = [first, second].map((result) => (JSON.parse(result.stdout.trim().split('\n').pop()!) as { data: MindStatus }).data.owners)
  const owners = reports[0]
  assert.ok(owners?.migration)
  assert.deepEqual(reports[1]?.migration, owners.migration, 'both processes read the one recorded migration')
  const logged = [first, second].filter((result) => /home migrated to owners/.test(result.stderr))
  assert.equal(logged.length, 1, 'one process migrated, and said so on stderr')

  const m = owners.migration
  assert.deepEqual(m.index, { userUnits: 1, users: 1 }, "the message unit got its conversation's user (SQLite migration 3)")
  assert.equal(m.notes.moved, 2)
  assert.deepEqual(m.notes.users, ['ada'])
  assert.deepEqual(m.notes.kept, [{ user: 'bad\u0001id', agent: 'default', reason: 'not a valid user id: no profile can hold it' }])
  assert.deepEqual(m.activity, { moved: 5, byUser: { ada: 4, bob: 1 } })
  assert.deepEqual(m.episodes, { moved: 1, byUser: { ada: 1 } })
  assert.deepEqual(m.resolutions, { assigned: 1 })

  // Where everything went.
  const files = snapshot(tmp.home)
  assert.equal(files.profile.match(/## Notes \(from default\)\n\nPrefers short answers\.\nLives in Oslo\./g)?.length, 1)
  assert.equal(files.profile.match(/## Notes \(from helper\)\n\nWorks nights\./g)?.length, 1)
  assert.match(files.profile, /^- Timezone: CET$/m, 'what the profile said is kept')
  const db = new DatabaseSync(join(tmp.home, 'engram.db'))
  assert.deepEqual(
    (db.prepare('SELECT user_id FROM ctx_agent_memory').all() as Array<{ user_id: string }>).map((row) => row.user_id),
    ['bad\u0001id'],
  )
  db.close()
  assert.deepEqual(files.agentActivity.trimEnd().split('\n'), [ACTIVITY[3], ACTIVITY[5], ACTIVITY[7], CUT_LINE], "the agent keeps its own events and the unreadable line")
  assert.deepEqual(files.adaActivity.trimEnd().split('\n'), [ACTIVITY[0], ACTIVITY[1], ACTIVITY[2], ACTIVITY[6]])
  assert.deepEqual(files.bobActivity.trimEnd().split('\n'), [ACTIVITY[4]])
  assert.ok(!files.agentEpisodes.includes('Deployed staging for Ada'))
  assert.ok(files.agentEpisodes.includes(ANON_SECTION) && files.agentEpisodes.includes(HAND_SECTION))
  assert.ok(files.adaEpisodes.startsWith(`# ${DAY}\n`) && files.adaEpisodes.includes(ADA_SECTION))
  const resolutions = files.resolutions.trimEnd().split('\n').map((line) => JSON.parse(line) as { id: string; user?: string })
  assert.deepEqual(
    resolutions.map((record) => [record.id, record.user]),
    [
      ['r1', 'ada'],
      ['r2', undefined],
    ],
  )
  const versions = read(tmp.home, 'agents', 'default', 'archive', 'versions', 'versions.jsonl')
  assert.match(versions, /owners migration/, "the agent's episode file before the move is kept as a version")

  // Who owns what now.
  assert.equal(owners.users.count, 2)
  const ada = owners.users.list.find((entry) => entry.user === 'ada')
  assert.equal(ada?.files, 3, 'activity day, episode day and profile')
  assert.ok((ada?.units ?? 0) >= 3, 'message, episode and profile units are hers')
  assert.equal(owners.agent.files, 2, "the agent's activity day and episode day")

  const human = await status(tmp, '--human')
  assert.match(human.stdout, /Owners/)
  assert.match(human.stdout, /users \(2\)\s+\d+ index units, 4 files/)
  assert.match(
    human.stdout,
    /migration\s+2026-\d\d-\d\d: 1 index units owned by 1 users from their conversations; 2 notes into 1 profiles; 5 activity events and 1 episode sections into users' trees; 1 resolutions given their user/,
  )
  assert.match(human.stdout, /notes of bad.id \(agent default\) left in ctx_agent_memory/)
  assert.equal(JSON.stringify(snapshot(tmp.home)), JSON.stringify(files), 'a later open changes nothing')

  // Each user's session now sees their own past and not the other's.
  const mind = await openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock: new ManualClock(`${DAY}T10:00:00.000Z`), embedder: null })
  t.after(() => mind.close())
  assert.equal((await mind.backend.context.findConversation('chat-ada', 'default'))?.user, 'ada')
  // New sessions: priming leaves out the events of the session it primes.
  const adaTurn = await mind.session('chat-ada-2', { user: 'ada' }).begin('What did you deploy for me?')
  assert.match(adaTurn.system, /Lives in Oslo/)
  assert.match(adaTurn.system, /SECRET-ADA/)
  assert.match(adaTurn.system, /staging deploy fails/)
  const bobTurn = await mind.session('chat-bob-2', { user: 'bob' }).begin('What did Ada ask for?')
  assert.doesNotMatch(bobTurn.system, /SECRET-ADA|Lives in Oslo|Deployed staging|staging deploy fails/)
  assert.match(bobTurn.system, /BOB-LUNCH/)
})

test('a migration that died half way is finished by the next open, without writing anything twice', async (t) => {
  const tmp = makeTempHome('engram-owners-resume-')
  t.after(tmp.cleanup)
  writeWaveOneHome(tmp.home)
  // What a process killed mid-migration leaves: one event already in Ada's day file, her notes
  // already in the profile, the agent's files and the notes table not yet rewritten.
  const adaActivity = join(tmp.home, 'agents', 'default', 'users', 'ada', 'activity')
  mkdirSync(adaActivity, { recursive: true })
  writeFileSync(join(adaActivity, `${DAY}.jsonl`), `${ACTIVITY[0]}\n`)
  writeFileSync(join(tmp.home, 'shared', 'users', 'ada.md'), '# Ada\n\n- Timezone: CET\n\n## Notes (from default)\n\nPrefers short answers.\nLives in Oslo.\n')

  await status(tmp, '--json')
  const files = snapshot(tmp.home)
  assert.deepEqual(files.adaActivity.trimEnd().split('\n'), [ACTIVITY[0], ACTIVITY[1], ACTIVITY[2], ACTIVITY[6]])
  assert.equal(files.profile.match(/## Notes \(from default\)/g)?.length, 1)
  assert.equal(files.profile.match(/## Notes \(from helper\)/g)?.length, 1)
  assert.deepEqual(files.agentActivity.trimEnd().split('\n'), [ACTIVITY[3], ACTIVITY[5], ACTIVITY[7], CUT_LINE])
})
