import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildPromptLayers, DEFAULT_SYSTEM_PROMPT } from './prompt-layers.ts'
import { openHarness } from './test-support/harness.ts'

test('prompt layers: built-in default, then SYSTEM.md / SOUL.md files, then the user notes', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm')
  const session = { sessionId: 's', agent: 'default', user: 'ada' }
  const deps = { documents: h.backend.documents, profiles: lcm }

  const bare = await buildPromptLayers(deps, session)
  assert.equal(bare.base.source, 'default')
  assert.equal(bare.base.text, DEFAULT_SYSTEM_PROMPT)
  assert.equal(bare.identity, undefined)
  assert.equal(bare.userNotes, undefined)
  assert.match(bare.system, /memory tool/)

  const configured = await buildPromptLayers({ ...deps, identity: 'You are Quill, a terse editor.' }, session)
  assert.equal(configured.identity?.source, 'config')

  await h.backend.documents.write('prompt', 'SYSTEM', {}, 'Answer in French.')
  await h.backend.documents.write('prompt', 'SOUL', {}, 'You are Quill.')
  await lcm.setProfile(session, 'Prefers metric units.\n## Injected heading')
  const layers = await buildPromptLayers({ ...deps, identity: 'ignored when SOUL.md exists' }, session)
  assert.deepEqual([layers.base.source, layers.identity?.source, layers.userNotes?.source], ['SYSTEM.md', 'SOUL.md', 'profile'])
  assert.equal(layers.system.indexOf('Answer in French.'), 0, 'instructions first')
  assert.match(layers.system, /## Your memory — notes about ada\nPrefers metric units.\n### Injected heading/)
  const noUser = await buildPromptLayers(deps, { sessionId: 's', agent: 'default' })
  assert.equal(noUser.userNotes, undefined)
})
