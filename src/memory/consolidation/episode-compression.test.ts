/**
 * Episode compression over episodes the real path wrote (`createMind` → activity and sessions →
 * session boundary → immediate encoding): old day files of the agent's and a user's tree shrink to
 * their headings, first sentences, lists and markers; the full file is in `archive/versions/`;
 * recall and the index read the compressed file; a second run changes nothing; and the markers
 * still keep immediate encoding from writing a section twice, even after its cursors are lost.
 */
import assert from 'node:assert/strict'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { parseFrontmatter } from '../../core/frontmatter.ts'
import { createNoneLlm } from '../../llm/none-llm.ts'
import { openMindInternals, type MindInternals } from '../../mind-internals.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import { formatEpisodeSection, parseEpisodeSections } from '../episodes/episode-format.ts'
import type { ActivityRecorder } from '../episodes/recorder.ts'
import { COMPRESSION_NOTE, compressEpisodes, compressEpisodeText } from './episode-compression.ts'

const MINUTE = 60_000

function open(temp: TempHome, clock: ManualClock): Promise<MindInternals> {
  return openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, llm: createNoneLlm(), embedder: null, reindexOnOpen: false })
}

const file = (temp: TempHome, rel: string): string => readFileSync(join(temp.home, ...rel.split('/')), 'utf8')

/** A long conversation about the staging deploy, with an explicit "done:" and "TODO:" the encoder lists. */
async function deployConversation(recorder: ActivityRecorder, clock: ManualClock, session: string): Promise<void> {
  await recorder.messageReceived('The staging deploy fails with an expired token, can you look?', { session })
  for (let step = 1; step <= 8; step++) {
    clock.advance(MINUTE)
    await recorder.toolUse('shell', { input: { command: `kubectl logs deploy-${step}` }, result: `step ${step} output`, ok: true }, { session })
    clock.advance(MINUTE)
    await recorder.responseSent(`Checked stage ${step} of the pipeline: the zebracorn cache is warm and stage ${step} is healthy.`, { session })
    await recorder.messageReceived(`Thanks, what about stage ${step + 1}?`, { session })
  }
  clock.advance(MINUTE)
  await recorder.responseSent('I renewed the deploy token and the staging deploy works again.\ndone: staging deploy fails\nTODO: rotate the deploy token every 90 days', { session })
}

describe('episode compression', () => {
  it('compresses every owner\'s old episode files to headings, first sentences, lists and markers; the archive keeps the full file; idempotent', async (t) => {
    const temp = makeTempHome('engram-compress-')
    t.after(temp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    let mind = await open(temp, clock)
    t.after(() => mind.close())

    // The agent's own session, through the activity recorder; ended explicitly.
    await deployConversation(mind.activity, clock, 'chat-1')
    assert.equal((await mind.sessions.end('chat-1')).kind, 'recorded')
    // A user's session, through the session API; it reaches its boundary when idle.
    const chat = mind.session('ada-1', { user: 'ada' })
    for (const [ask, answer] of [
      ['Plan the quarterly offsite for the platform team, somewhere warm in May.', 'Lisbon fits: flights are short and the venue holds 40 people.'],
      ['What about the budget for the quokka workshop?', 'The quokka workshop costs 4000 euros, within the budget.'],
      ['And the travel days?', 'Monday and Friday are travel days; the workshop runs Tuesday to Thursday.'],
      ['Please book it.', 'Booked the venue in Lisbon.\ndone: choose the offsite venue\nTODO: send the invitations'],
    ] as const) {
      const turn = await chat.begin(ask)
      clock.advance(MINUTE)
      await chat.end(turn, answer)
    }
    clock.advance(11 * MINUTE)
    await mind.maintain()

    const agentDay = 'agents/default/episodes/2026-03-02.md'
    const adaDay = 'agents/default/users/ada/episodes/2026-03-02.md'
    const originals = { agent: file(temp, agentDay), ada: file(temp, adaDay) }
    assert.match(originals.agent, /Checked stage 3 of the pipeline/)
    assert.match(originals.ada, /quokka workshop/)

    // A recent day is not compressed; an old file whose frontmatter cannot be read is left alone.
    clock.set('2026-04-08T09:00:00Z')
    await deployConversation(mind.activity, clock, 'chat-2')
    assert.equal((await mind.sessions.end('chat-2')).kind, 'recorded')
    const recent = file(temp, 'agents/default/episodes/2026-04-08.md')
    const broken = '---\ntitle: [unclosed\n---\n# 2026-02-01\n\n## 10:00 — Hand-written\n\nA long note. With more sentences. And more. And even more words here.\n'
    writeFileSync(join(temp.home, 'agents/default/episodes/2026-02-01.md'), broken)

    clock.set('2026-04-10T09:00:00Z')
    const deps = { backend: mind.backend, layout: mind.layout, clock }
    const dry = await compressEpisodes(deps, { dryRun: true })
    assert.deepEqual(dry.compressed.map((entry) => entry.path).sort(), ['episodes/2026-03-02.md', 'users/ada/episodes/2026-03-02.md'])
    assert.deepEqual(dry.skipped.map((entry) => entry.path), ['episodes/2026-02-01.md'])
    assert.match(dry.skipped[0]?.reason ?? '', /frontmatter cannot be read/)
    assert.equal(file(temp, agentDay), originals.agent, 'a dry run writes nothing')

    const run = await compressEpisodes(deps)
    assert.deepEqual(run.compressed, dry.compressed)
    for (const entry of run.compressed) assert.ok(entry.after < entry.before, `${entry.path}: ${entry.before} → ${entry.after}`)
    const long = run.compressed.find((entry) => entry.path === 'episodes/2026-03-02.md')
    assert.ok(long && long.after < long.before / 2, 'a long session keeps less than half')

    for (const [rel, original, owner] of [
      [agentDay, originals.agent, 'agent'],
      [adaDay, originals.ada, 'user:ada'],
    ] as const) {
      const text = file(temp, rel)
      const parsed = parseFrontmatter(text)
      assert.equal(parsed.frontmatter.compressed, true)
      assert.equal(parsed.frontmatter.compression, 'extractive')
      assert.equal(parsed.frontmatter.compressed_at, '2026-04-10T09:00:00.000Z')
      const before = parseEpisodeSections(parseFrontmatter(original).body)
      const after = parseEpisodeSections(parsed.body)
      // Same sections, same headings, every marker still parses and says the same.
      assert.deepEqual(
        after.map((section) => [section.heading, section.marker]),
        before.map((section) => [section.heading, section.marker]),
      )
      assert.ok(after.some((section) => section.marker !== undefined))
      assert.ok(text.startsWith('---\n') && parsed.body.startsWith('# 2026-03-02\n'), 'the title stays')
      assert.ok(parsed.body.includes(COMPRESSION_NOTE))
      // The full file is the newest saved version, byte for byte, with the reason.
      const [saved] = await mind.backend.owned(owner).documents.versions('episode', '2026-03-02')
      assert.ok(saved)
      assert.equal(file(temp, saved.path), original)
      assert.match(file(temp, saved.path.replace(/versions\/episode\/.*$/, 'versions/versions.jsonl')), /episode compression: older than 30 days/)
    }

    const agentText = file(temp, agentDay)
    assert.match(agentText, /MSG< The staging deploy fails with an expired token, can you look\?/, 'the first request stays')
    assert.match(agentText, /Resolved:\n- staging deploy fails/)
    assert.match(agentText, /New tasks:\n- rotate the deploy token every 90 days/)
    assert.doesNotMatch(agentText, /Checked stage 3 of the pipeline/, 'the middle of the session goes')
    const adaText = file(temp, adaDay)
    assert.match(adaText, /Plan the quarterly offsite for the platform team/)
    assert.match(adaText, /Resolved:\n- choose the offsite venue/)
    assert.match(adaText, /New tasks:\n- send the invitations/)
    assert.doesNotMatch(adaText, /Monday and Friday are travel days/)

    assert.equal(file(temp, 'agents/default/episodes/2026-04-08.md'), recent, 'a recent day is untouched')
    assert.equal(file(temp, 'agents/default/episodes/2026-02-01.md'), broken, 'an unreadable file is kept byte for byte')

    // A second run changes nothing.
    const again = await compressEpisodes(deps)
    assert.deepEqual(again.compressed, [])
    assert.equal(file(temp, agentDay), agentText)
    assert.equal(file(temp, adaDay), adaText)
    assert.equal((await mind.backend.documents.versions('episode', '2026-03-02')).length, 1)

    // Nothing is appended again by a later boundary; the old sessions have nothing new.
    assert.equal((await mind.sessions.end('chat-1')).kind, 'nothing_new')
    assert.deepEqual((await mind.maintain()).boundaries, [])
    await mind.activity.messageReceived('One more question about the zebracorn cache', { session: 'chat-1' })
    clock.advance(MINUTE)
    assert.equal((await mind.sessions.end('chat-1')).kind, 'recorded')
    assert.equal(file(temp, agentDay), agentText, 'the new stretch goes to today\'s file')
    assert.match(file(temp, 'agents/default/episodes/2026-04-10.md'), /One more question about the zebracorn cache/)

    // Recall and the index read the compressed file.
    const recalled = await mind.recall('staging deploy expired token', { daysBack: 60 })
    assert.ok(recalled.some((result) => result.ref.startsWith('episodes/2026-03-02.md#') && result.text.includes('rotate the deploy token')), JSON.stringify(recalled.map((r) => r.ref)))
    const adaRecall = await mind.scope('ada').recall('quarterly offsite platform team', { daysBack: 60 })
    assert.ok(adaRecall.some((result) => result.ref === `users/ada/episodes/2026-03-02.md#${result.title}` && result.source === 'episode'), JSON.stringify(adaRecall.map((r) => r.ref)))
    await mind.close()
    mind = await open(temp, clock)
    await mind.reindex()
    const units = await mind.backend.index.get([...(await mind.backend.index.hashes(agentDay)).keys()])
    assert.ok(units.length > 0)
    const indexed = units.map((unit) => unit.text).join('\n')
    assert.match(indexed, /rotate the deploy token every 90 days/)
    assert.doesNotMatch(indexed, /Checked stage 3/, 'the index follows the file')
  })

  it('a compressed file\'s markers still stop immediate encoding from writing a section twice when its cursor is lost', async (t) => {
    const temp = makeTempHome('engram-compress-')
    t.after(temp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    let mind = await open(temp, clock)
    t.after(() => mind.close())
    await deployConversation(mind.activity, clock, 'chat-1')
    assert.equal((await mind.sessions.end('chat-1')).kind, 'recorded')

    clock.set('2026-03-03T12:00:00Z')
    const run = await compressEpisodes({ backend: mind.backend, layout: mind.layout, clock }, { olderThanDays: 0 })
    assert.deepEqual(run.compressed.map((entry) => entry.path), ['episodes/2026-03-02.md'])
    const compressed = file(temp, 'agents/default/episodes/2026-03-02.md')
    const resolutions = file(temp, 'shared/resolutions.jsonl')

    // Losing the database loses every cursor: only the markers in the (compressed) file are left.
    await mind.close()
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(temp.home, `engram.db${suffix}`), { force: true })
    mind = await open(temp, clock)
    const again = await mind.sessions.end('chat-1')
    assert.equal(again.kind, 'nothing_new')
    assert.ok(again.kind === 'nothing_new' && again.repaired?.startsWith('episodes/2026-03-02.md#09:00'), JSON.stringify(again))
    assert.equal(file(temp, 'agents/default/episodes/2026-03-02.md'), compressed)
    assert.equal(file(temp, 'shared/resolutions.jsonl'), resolutions, 'the resolution is not propagated twice')
  })

  it('compressEpisodeText keeps two sentences of a summary within bounds, short sections whole, and is its own fixed point', () => {
    const marker = { session: 's', turns: [1, 2] as [number, number], from: 'a#L1', until: 'a#L4', untilTs: '2026-03-02T10:00:00.000Z', method: 'llm' as const, recorded: '2026-03-02T10:05:00.000Z' }
    const body = [
      '# 2026-03-02\n',
      formatEpisodeSection({ time: '10:00', title: 'Login bug', body: 'Ada reported that SSO login failed. The agent found a stale certificate. It replaced the certificate and restarted the gateway. Login works again.', resolved: ['SSO login fails'], tasks: [], marker }),
      formatEpisodeSection({ time: '11:00', title: 'Long', body: `${'word '.repeat(200)}end. Second sentence.`, resolved: [], tasks: [], marker: { ...marker, session: 't' } }),
      '\n## 12:00 — Hand-written\n\nMet Bob.\n',
    ].join('')
    const once = compressEpisodeText(body).body
    assert.match(once, /## 10:00 — Login bug\n\nAda reported that SSO login failed\. The agent found a stale certificate\.\n\n_\(compressed/)
    assert.doesNotMatch(once, /restarted the gateway/)
    const lead = parseEpisodeSections(once).find((section) => section.heading === '11:00 — Long')?.body.split('\n')[0] ?? ''
    assert.ok(lead.endsWith('…') && lead.length <= 320, lead)
    assert.match(once, /## 12:00 — Hand-written\n\nMet Bob\.\n$/, 'a short hand-written section stays whole')
    assert.equal(compressEpisodeText(once).body, once)
    assert.deepEqual(
      parseEpisodeSections(once).map((section) => section.marker),
      parseEpisodeSections(body).map((section) => section.marker),
    )
  })
})
