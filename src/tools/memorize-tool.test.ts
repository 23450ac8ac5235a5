import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { type OpenedMemory, openMemory } from '../memory/engrams/test-support/open-memory.ts'
import { buildMemorizeTool } from './memorize-tool.ts'

describe('memorize tool', () => {
  let opened: OpenedMemory | undefined
  afterEach(async () => {
    await opened?.close()
    opened?.temp.cleanup()
  })

  it('saves entries with confidence high and source user, through the gate', async () => {
    opened = openMemory({ mode: 'copilot' })
    const tool = buildMemorizeTool(opened.memory.encoder)
    assert.equal(tool.name, 'memorize')
    assert.equal((tool.jsonSchema as { type?: string }).type, 'object')
    const result = await tool.execute({
      entries: [
        { text: 'CoinGecko rate-limits at 50 req/min', kind: 'lesson', scope: 'global', topic: 'api-coingecko' },
        { text: 'Always use progress() for long API calls in scratchpad', kind: 'always' },
      ],
    })
    assert.equal(result.isError, undefined)
    assert.match(result.text, /saved \[lesson, global\] CoinGecko/)
    assert.match(result.text, /saved \[always, global\] Always use progress\(\)/)
    const tagged = await tool.execute({ entries: [{ text: 'Use time.sleep() in scratchpad cells', kind: 'never' }, { text: 'If a cell runs long, call progress()', kind: 'when', tool: 'scratchpad' }] })
    assert.match(tagged.text, /saved \[never, global\] Never: Use time\.sleep\(\) in scratchpad cells/)
    assert.equal((await opened.memory.global.recallToolWisdom('scratchpad'))[0]?.text, 'If a cell runs long, call progress()')
    const lessons = await opened.memory.global.recallLessons()
    assert.equal(lessons[0]?.confidence, 'high')
    assert.equal(lessons[0]?.source, 'user')
    assert.equal(lessons[0]?.topic, 'api-coingecko')
    assert.equal((await opened.memory.encoder.pendingConfirmations()).length, 0)
  })

  it('answers bad arguments with a readable error and the fix', async () => {
    opened = openMemory()
    const tool = buildMemorizeTool(opened.memory.encoder)
    const bad = await tool.execute({ entries: [{ text: '', kind: 'rumour' }] })
    assert.equal(bad.isError, true)
    assert.match(bad.text, /entries\.0\.text/)
    assert.match(bad.text, /entries\.0\.kind/)
    assert.match(bad.text, /Fix: pass \{"entries"/)
    assert.equal((await tool.execute(null)).isError, true)
    const noProject = openMemory({ project: false })
    try {
      const rejected = await buildMemorizeTool(noProject.memory.encoder).execute({ entries: [{ text: 'x is y', kind: 'lesson', scope: 'project' }] })
      assert.equal(rejected.isError, true)
      assert.match(rejected.text, /no project is open/)
    } finally {
      await noProject.close()
      noProject.temp.cleanup()
    }
  })
})
