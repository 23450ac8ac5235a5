import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { Engram } from '../../core/engram.ts'
import { parseConfirmationAnswer } from './confirmation-answer.ts'
import { type OpenedMemory, openMemory } from './test-support/open-memory.ts'

const lesson = (text: string, extra: Partial<Engram> = {}): Engram => ({ text, kind: 'lesson', scope: 'global', confidence: 'high', source: 'llm', ...extra })

describe('encode()', () => {
  const opened: OpenedMemory[] = []
  const open = (...args: Parameters<typeof openMemory>) => {
    const memory = openMemory(...args)
    opened.push(memory)
    return memory
  }
  afterEach(async () => {
    for (const item of opened.splice(0)) {
      await item.close()
      item.temp.cleanup()
    }
  })

  it('routes rules, lessons and profile facts to the seed formats, by scope', async () => {
    const { memory, temp } = open()
    const report = await memory.encoder.encode([
      { text: 'Use httpx instead of requests', kind: 'always', scope: 'global', confidence: 'high', source: 'user' },
      { text: 'Use time.sleep() in scratchpad cells', kind: 'never', scope: 'global', confidence: 'high', source: 'consolidation' },
      { text: 'If fetching paginated API data → async + progress() between pages', kind: 'when', scope: 'project', confidence: 'medium', source: 'consolidation' },
      lesson('CoinGecko free tier rate-limits at ~50 req/min', { topic: 'api-coingecko' }),
      lesson('The build uses pnpm workspaces', { scope: 'project' }),
      { text: 'Name: Jorge', kind: 'profile', scope: 'global', confidence: 'high', source: 'user' },
    ])
    assert.equal(report.saved.length, 6, JSON.stringify(report.rejected))
    const rules = await readFile(join(temp.home, 'agents/default/memory/rules.md'), 'utf8')
    assert.equal(
      rules,
      [
        '# Rules',
        '',
        '## Always',
        '- Use httpx instead of requests <!-- confidence:high source:user ts:2026-03-01 -->',
        '',
        '## Never',
        '- Use time.sleep() in scratchpad cells <!-- confidence:high source:consolidation ts:2026-03-01 -->',
        '',
        '## When',
        '',
      ].join('\n'),
    )
    const projectRules = await readFile(join(temp.project, '.engram/memory/rules.md'), 'utf8')
    assert.match(projectRules, /## When\n- If fetching paginated API data → async \+ progress\(\) between pages <!-- confidence:medium source:consolidation ts:2026-03-01 -->/)
    const lessons = await readFile(join(temp.home, 'agents/default/memory/lessons.md'), 'utf8')
    assert.match(lessons, /^# Lessons\n- CoinGecko free tier rate-limits at ~50 req\/min <!-- topic:api-coingecko confidence:high source:llm ts:2026-03-01 -->\n$/)
    const topic = await readFile(join(temp.home, 'agents/default/memory/topics/api-coingecko.md'), 'utf8')
    assert.match(topic, /CoinGecko free tier/)
    assert.match(await readFile(join(temp.project, '.engram/memory/lessons.md'), 'utf8'), /pnpm workspaces/)
    assert.match(await readFile(join(temp.home, 'agents/default/memory/profile.md'), 'utf8'), /^# Profile\n- Name: Jorge/)
  })

  it('deduplicates, and merges profile facts by key prefix', async () => {
    const { memory } = open()
    await memory.encoder.encode([lesson('Pandas read_csv needs encoding utf-8-sig for BOM files')])
    const again = await memory.encoder.encode([lesson('pandas read_csv needs encoding utf-8-sig for BOM files.')])
    assert.equal(again.saved.length, 0)
    assert.equal(again.duplicates.length, 1)

    const fact = (text: string): Engram => ({ text, kind: 'profile', scope: 'global', confidence: 'high', source: 'user' })
    await memory.encoder.encode([fact('Name: George'), fact('Timezone: PST'), fact('Prefers tea over coffee')])
    const replaced = await memory.encoder.encode([fact('Name: Jorge')])
    assert.equal(replaced.saved.length, 1)
    const profile = await memory.global.recallIdentity()
    assert.deepEqual(
      profile.map((entry) => entry.text),
      ['Name: Jorge', 'Timezone: PST', 'Prefers tea over coffee'],
    )
    assert.equal((await memory.encoder.encode([fact('Name: Jorge')])).duplicates.length, 1)
  })

  it('rejects invalid engrams and project scope without a project, keeping the valid ones', async () => {
    const { memory } = open({ project: false })
    const report = await memory.encoder.encode([
      lesson('kept lesson'),
      lesson('   '),
      lesson('project only', { scope: 'project' }),
      { ...lesson('bad kind'), kind: 'rumour' as Engram['kind'] },
    ])
    assert.equal(report.saved.length, 1)
    assert.deepEqual(
      report.rejected.map((item) => item.engram.text),
      ['   ', 'project only', 'bad kind'],
    )
    assert.match(report.rejected[1]?.reason ?? '', /no project is open.*ENGRAM_PROJECT/)
  })

  it('logs one memory_write activity event per save', async () => {
    const { memory, backend } = open()
    await memory.encoder.encode([lesson('one'), lesson('two', { tool: 'web_search' }), lesson('one')])
    const events = await backend.activity.read({ types: ['memory_write'] })
    assert.deepEqual(
      events.map((event) => event.content),
      ['one', 'two'],
    )
    assert.equal(events[1]?.meta?.tool, 'web_search')
  })

  it('mode off saves nothing but memory is still read', async () => {
    const first = open()
    await first.memory.encoder.encode([lesson('remembered before')])
    const off = first.reopen('off')
    opened.push(off)
    const report = await off.memory.encoder.encode([lesson('not saved')])
    assert.equal(report.suppressed.length, 1)
    assert.equal(report.saved.length, 0)
    const context = await off.memory.buildContext()
    assert.match(context.text, /remembered before/)
    assert.doesNotMatch(context.text, /not saved/)
  })

  it('copilot saves high confidence, queues the rest; the queue survives a restart; accept/reject/pick', async () => {
    const first = open({ mode: 'copilot' })
    const report = await first.memory.encoder.encode([
      lesson('sure thing'),
      lesson('maybe one', { confidence: 'medium' }),
      lesson('maybe two', { confidence: 'low' }),
      lesson('maybe three', { confidence: 'medium', scope: 'project' }),
    ])
    assert.equal(report.saved.length, 1)
    assert.equal(report.pending.length, 3)
    assert.match(report.pending[0]?.reason ?? '', /copilot mode: confidence medium/)
    // Queuing the same memory twice does not ask twice.
    const again = await first.memory.encoder.encode([lesson('maybe one', { confidence: 'medium' })])
    assert.equal(again.pending[0]?.id, report.pending[0]?.id)

    const second = first.reopen()
    opened.push(second)
    const pending = await second.memory.encoder.pendingConfirmations()
    assert.deepEqual(
      pending.map((item) => item.engram?.text),
      ['maybe one', 'maybe two', 'maybe three'],
    )
    // Reading does not consume.
    assert.equal((await second.memory.encoder.pendingConfirmations()).length, 3)

    const answer = parseConfirmationAnswer('1 3', pending)
    assert.ok(answer)
    const picked = await second.memory.encoder.acceptConfirmations(answer.accept)
    const dropped = await second.memory.encoder.rejectConfirmations(answer.reject)
    assert.deepEqual(
      picked.accepted.map((item) => item.engram?.text),
      ['maybe one', 'maybe three'],
    )
    assert.deepEqual(
      dropped.rejected.map((item) => item.engram?.text),
      ['maybe two'],
    )
    assert.equal((await second.memory.encoder.pendingConfirmations()).length, 0)
    const lessons = (await second.memory.global.recallLessons()).map((entry) => entry.text)
    assert.deepEqual(lessons.sort(), ['maybe one', 'sure thing'])
    assert.deepEqual(
      (await second.memory.project?.recallLessons())?.map((entry) => entry.text),
      ['maybe three'],
    )
    await assert.rejects(second.memory.encoder.acceptConfirmations(['99']), /No pending confirmation has the id 99/)
  })

  it('accept all and reject all', async () => {
    const { memory } = open({ mode: 'copilot' })
    await memory.encoder.encode([lesson('a', { confidence: 'low' }), lesson('b', { confidence: 'low' })])
    const accepted = await memory.encoder.acceptConfirmations('all')
    assert.equal(accepted.accepted.length, 2)
    assert.equal(accepted.report.saved.length, 2)
    await memory.encoder.encode([lesson('c', { confidence: 'low' })])
    const rejected = await memory.encoder.rejectConfirmations('all')
    assert.equal(rejected.rejected.length, 1)
    assert.deepEqual((await memory.global.recallLessons()).map((entry) => entry.text).sort(), ['a', 'b'])
  })

  it('parses Anton-style answers', () => {
    const pending = ['7', '8', '9'].map((id) => ({ id, engram: lesson(id), queuedAt: '', reason: '' }))
    assert.deepEqual(parseConfirmationAnswer('y', pending), { accept: ['7', '8', '9'], reject: [] })
    assert.deepEqual(parseConfirmationAnswer('n', pending), { accept: [], reject: ['7', '8', '9'] })
    assert.deepEqual(parseConfirmationAnswer('2', pending), { accept: ['8'], reject: ['7', '9'] })
    assert.equal(parseConfirmationAnswer('4', pending), null)
    assert.equal(parseConfirmationAnswer('maybe', pending), null)
  })
})
