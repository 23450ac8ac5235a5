/**
 * Facts that change, offline (decision 0031): an explicit first-person statement that updates a fact
 * ("I moved to Lisbon", "my budget is now 40k") replaces the value under the same key in that
 * user's profile, through the agent's path (identity extraction every fifth turn), and the old
 * value stays in the profile's history.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

test('"I moved to Lisbon" replaces "I live in Berlin" in the user\'s profile, the old value kept in its history, and no other user\'s profile changes', async (t) => {
  const temp = makeTempHome('engram-facts-')
  t.after(temp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
  t.after(() => mind.close())
  const say = async (user: string, messages: string[]): Promise<void> => {
    for (const message of messages) {
      const session = mind.session(`${user}-${clock.now().getTime()}`, { user })
      await session.end(await session.begin(message), 'Noted.')
      clock.advance(60_000)
    }
    await mind.idle()
    await mind.maintain()
  }
  await say('ada', ['Hi, I live in Berlin and my budget is 30k.', 'What is a good laptop?', 'Thanks.', 'And a monitor?', 'Great.'])
  await say('bob', ['I live in Oslo.', 'Hello.', 'Hi.', 'Hey.', 'Ok.'])
  const before = (await mind.memory.profiles.facts('ada')).map((entry) => entry.text)
  assert.ok(before.includes('Location: Berlin') && before.includes('Budget: 30k'), before.join(' | '))

  clock.advanceDays(30)
  await say('ada', ['I moved to Lisbon last month, so my budget is now 40k.', 'Any tips for the move?', 'Ok.', 'Thanks.', 'Bye.'])
  const after = (await mind.memory.profiles.facts('ada')).map((entry) => entry.text)
  assert.ok(after.includes('Location: Lisbon') && after.includes('Budget: 40k'), after.join(' | '))
  assert.ok(!after.includes('Location: Berlin') && !after.includes('Budget: 30k'), 'the newer value replaces the old one under its key')
  // The old value is in the profile's history.
  const versions = await mind.backend.documents.versions('user', 'ada')
  assert.ok(versions.length > 0, 'the replaced profile was versioned')
  const history = versions.map((version) => readFileSync(isAbsolute(version.path) ? version.path : join(temp.home, version.path), 'utf8')).join('\n')
  assert.match(history, /Location: Berlin/)
  assert.match(history, /Budget: 30k/)
  assert.deepEqual((await mind.memory.profiles.facts('bob')).map((entry) => entry.text), ['Location: Oslo'])
})
