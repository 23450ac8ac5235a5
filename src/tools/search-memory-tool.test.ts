import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../core/clock.ts'
import { EngramError } from '../core/errors.ts'
import { openMindInternals, type MindInternals } from '../mind-internals.ts'
import { makeTempHome, type TempHome } from '../testing/temp-home.ts'
import { buildReadMemoryFileTool } from './memory-files.ts'
import { buildSearchMemoryTool, type MemorySearchHit } from './search-memory-tool.ts'

describe('search_memory', () => {
  let temp: TempHome
  let mind: MindInternals
  const clock = new ManualClock('2026-02-03T10:00:00Z')

  before(async () => {
    temp = makeTempHome('engram-search-tool-')
    mkdirSync(temp.project, { recursive: true })
    mind = await openMindInternals({ home: temp.home, project: temp.project, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
    await mind.backend.documents.write('knowledge', 'green-tea', {}, '# Green tea\nSencha is brewed at 80 degrees for two minutes.\n')
    await mind.backend.documents.write('knowledge', 'coffee', {}, '# Coffee\nEspresso needs 9 bar of pressure.\n')
    const project = mind.backend.engrams('project')
    assert.ok(project)
    await project.encodeLesson({ kind: 'lesson', text: 'The sencha supplier ships on Mondays', ts: '2026-02-01' } as never)
    await mind.reindex()
  })
  after(async () => {
    await mind.close()
    temp.cleanup()
  })

  // The agent's own search_memory, over the mind's hybrid retriever (the path every session takes).
  const searchTool = () => {
    const tool = mind.agentTools().find((candidate) => candidate.name === 'search_memory')
    assert.ok(tool)
    return tool
  }

  test('finds what was indexed, best first, with sources read_memory_file opens', async () => {
    const tool = searchTool()
    const result = await tool.execute({ query: 'sencha' })
    assert.equal(result.isError, undefined, result.text)
    assert.match(result.text, /^2 results for "sencha"/)
    assert.match(result.text, /\[knowledge [\d-]+\] \\# Green tea Sencha is brewed/)
    assert.match(result.text, /source: knowledge\/green-tea\.md \(open with read_memory_file knowledge\/green-tea\.md\)/)
    assert.match(result.text, /source: project\/lessons\.md/)
    const hits = (result.data as { hits: Array<MemorySearchHit & { ref: string }> }).hits
    const knowledge = hits.find((hit) => hit.kind === 'knowledge')
    assert.ok(knowledge)
    const read = buildReadMemoryFileTool({ layout: mind.layout })
    const opened = await read.execute({ path: knowledge.ref })
    assert.match(opened.text, /80 degrees/)
    const [stored] = await mind.backend.index.get([knowledge.id])
    assert.equal(stored?.accessCount, 1)
  })

  test('kinds and limit narrow the search; no match says so', async () => {
    const tool = searchTool()
    const lessons = await tool.execute({ query: 'sencha', kinds: ['lesson'] })
    assert.match(lessons.text, /^1 result for "sencha"/)
    assert.match(lessons.text, /\[lesson/)
    const one = await tool.execute({ query: 'sencha', limit: 1 })
    assert.equal((one.data as { hits: unknown[] }).hits.length, 1)
    const none = await tool.execute({ query: 'zeppelin' })
    assert.equal(none.isError, undefined)
    assert.match(none.text, /Nothing in your memory matches "zeppelin"/)
  })

  test('bad arguments and engine failures are readable errors, never throws', async () => {
    const tool = searchTool()
    const bad = await tool.execute({ query: '', kinds: ['planets'] })
    assert.equal(bad.isError, true)
    assert.match(bad.text, /query/)
    assert.match(bad.text, /kinds/)
    assert.match(bad.text, /Fix: pass/)
    const failing = buildSearchMemoryTool({
      layout: mind.layout,
      search: async () => {
        throw new EngramError({ code: 'storage_unavailable', category: 'system', message: 'The index is gone.', fix: 'run engram reindex' })
      },
    })
    const failed = await failing.execute({ query: 'tea' })
    assert.equal(failed.isError, true)
    assert.match(failed.text, /The index is gone\.\nFix: run engram reindex/)
  })

  test('conversation hits point at the memory tool', async () => {
    const tool = buildSearchMemoryTool({
      layout: mind.layout,
      search: async () => [{ id: 'msg:7', kind: 'message', text: 'we chose sencha', source: 'conv:2', score: 1, createdAt: '2026-02-01T09:00:00Z' }],
    })
    const result = await tool.execute({ query: 'sencha' })
    assert.match(result.text, /\[message 2026-02-01\] we chose sencha\n {3}source: conv:2 \(open with memory tool: expand msg:7\)/)
  })
})
