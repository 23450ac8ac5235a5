import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildPromptLayers, DEFAULT_SYSTEM_PROMPT } from './prompt-layers.ts'
import { openHarness } from './test-support/harness.ts'

test('prompt layers: built-in default, then SYSTEM.md / SOUL.md files', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const deps = { documents: h.backend.documents }

  const bare = await buildPromptLayers(deps)
  assert.equal(bare.base.source, 'default')
  assert.equal(bare.base.text, DEFAULT_SYSTEM_PROMPT)
  assert.equal(bare.identity, undefined)
  assert.match(bare.system, /memory tool/)

  const configured = await buildPromptLayers({ ...deps, identity: 'You are Quill, a terse editor.' })
  assert.equal(configured.identity?.source, 'config')

  await h.backend.documents.write('prompt', 'SYSTEM', {}, 'Answer in French.')
  await h.backend.documents.write('prompt', 'SOUL', {}, 'You are Quill.')
  const layers = await buildPromptLayers({ ...deps, identity: 'ignored when SOUL.md exists' })
  assert.deepEqual([layers.base.source, layers.identity?.source], ['SYSTEM.md', 'SOUL.md'])
  assert.equal(layers.system.indexOf('Answer in French.'), 0, 'instructions first')
})
