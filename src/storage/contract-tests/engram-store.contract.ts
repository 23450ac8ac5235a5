/**
 * Contract suite for EngramStore: every backend (markdown files, PostgreSQL rows) must pass it.
 * Call it from a `*.test.ts` file with a factory that returns a fresh, empty store.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ManualClock } from '../../core/clock.ts'
import type { EngramEntry, EngramKind } from '../../core/engram.ts'
import type { EngramStore } from '../contracts.ts'
import { toolWisdom } from '../engram-entries.ts'

export interface EngramStoreFixture {
  store: EngramStore
  cleanup(): Promise<void>
  /** The store's clock, when the factory can control it: enables the `ts` default checks. */
  clock?: ManualClock
}

function entry(text: string, kind: EngramKind, extra: Partial<EngramEntry> = {}): EngramEntry {
  return { text, kind, meta: {}, ...extra }
}

/** Registers the EngramStore contract tests under `describe(name)`. */
export function runEngramStoreContract(name: string, make: () => Promise<EngramStoreFixture>): void {
  async function withStore(fn: (fixture: EngramStoreFixture) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture)
    } finally {
      await fixture.cleanup()
    }
  }

  describe(`EngramStore contract: ${name}`, () => {
    test('an empty store recalls nothing', () =>
      withStore(async ({ store }) => {
        assert.deepEqual(await store.recallIdentity(), [])
        assert.deepEqual(await store.recallRules(), { always: [], never: [], when: [] })
        assert.deepEqual(await store.recallLessons(), [])
        assert.deepEqual(await store.recallLessons(100), [])
        assert.deepEqual(await store.recallToolWisdom(), [])
        assert.deepEqual(await store.listTopics(), [])
        assert.equal(await store.recallTopic('anything'), null)
        assert.deepEqual(await store.read('rules'), { entries: [], problems: [] })
        assert.equal(typeof store.location, 'string')
      }))

    test('rules are filed by kind, keep their metadata and get a ts', () =>
      withStore(async ({ store, clock }) => {
        const added = await store.encodeRule(entry('Use httpx instead of requests', 'always', { confidence: 'high', source: 'user' }))
        assert.equal(added.kind, 'added')
        await store.encodeRule(entry('Use time.sleep() in scratchpad cells', 'never', { ts: '2026-02-27', confidence: 'high' }))
        await store.encodeRule(entry('If fetching paginated data → progress() between pages', 'when', { confidence: 'medium' }))
        const rules = await store.recallRules()
        assert.deepEqual(rules.always.map((e) => e.text), ['Use httpx instead of requests'])
        assert.deepEqual(rules.never.map((e) => e.text), ['Use time.sleep() in scratchpad cells'])
        assert.deepEqual(rules.when.map((e) => e.text), ['If fetching paginated data → progress() between pages'])
        const always = rules.always[0]
        assert.equal(always?.kind, 'always')
        assert.equal(always?.confidence, 'high')
        assert.equal(always?.source, 'user')
        assert.match(always?.ts ?? '', /^\d{4}-\d{2}-\d{2}$/)
        if (clock) assert.equal(always?.ts, clock.now().toISOString().slice(0, 10))
        assert.equal(rules.never[0]?.ts, '2026-02-27', 'an explicit ts is kept')
      }))

    test('encoding deduplicates by normalised text and returns the existing entry', () =>
      withStore(async ({ store }) => {
        await store.encodeRule(entry('Cite your sources.', 'always'))
        const again = await store.encodeRule(entry('  cite YOUR sources ', 'always'))
        assert.equal(again.kind, 'duplicate')
        assert.equal(again.kind === 'duplicate' && again.existing.text, 'Cite your sources.')
        assert.equal((await store.recallRules()).always.length, 1)

        await store.encodeLesson(entry('Pandas needs utf-8-sig for BOM files', 'lesson'))
        const lesson = await store.encodeLesson(entry('pandas needs UTF-8-SIG for bom files.', 'lesson'))
        assert.equal(lesson.kind, 'duplicate')
        assert.equal((await store.recallLessons()).length, 1)
      }))

    test('lessons with a topic are cross-filed into the topic', () =>
      withStore(async ({ store }) => {
        await store.encodeLesson(entry('CoinGecko rate-limits at ~50 req/min', 'lesson', { topic: 'api-coingecko' }))
        await store.encodeLesson(entry('Bitcoin data via /coins/bitcoin/market_chart/range', 'lesson', { topic: 'api-coingecko' }))
        await store.encodeLesson(entry('read_csv low_memory=False for mixed types', 'lesson', { topic: 'Pandas Tips!' }))
        await store.encodeLesson(entry('No topic here', 'lesson'))
        assert.deepEqual(await store.listTopics(), ['api-coingecko', 'pandas-tips'])
        const topic = await store.recallTopic('api-coingecko')
        assert.ok(topic?.includes('CoinGecko rate-limits at ~50 req/min'))
        assert.ok(topic?.includes('Bitcoin data via /coins/bitcoin/market_chart/range'))
        assert.ok(!topic?.includes('No topic here'))
        assert.ok((await store.recallTopic('pandas-tips'))?.includes('low_memory=False'))
        assert.equal(await store.recallTopic('../lessons'), null, 'a slug cannot leave the topics')
        const lessons = await store.recallLessons()
        assert.equal(lessons.find((e) => e.text.startsWith('CoinGecko'))?.topic, 'api-coingecko')
      }))

    test('recallLessons: most recent first, within the token budget', () =>
      withStore(async ({ store }) => {
        await store.encodeLesson(entry('old lesson one', 'lesson', { ts: '2026-01-01' }))
        await store.encodeLesson(entry('newest lesson', 'lesson', { ts: '2026-03-01' }))
        await store.encodeLesson(entry('old lesson two', 'lesson', { ts: '2026-01-01' }))
        await store.encodeLesson(entry('middle lesson', 'lesson', { ts: '2026-02-01' }))
        const all = await store.recallLessons()
        assert.deepEqual(
          all.map((e) => e.text),
          ['newest lesson', 'middle lesson', 'old lesson two', 'old lesson one'],
        )
        const two = await store.recallLessons(5)
        assert.deepEqual(
          two.map((e) => e.text),
          ['newest lesson', 'middle lesson'],
        )
        assert.deepEqual(await store.recallLessons(0), [])
      }))

    test('recallToolWisdom: "when" rules and lessons tagged for the tool, never untagged rules', () =>
      withStore(async ({ store }) => {
        await store.encodeRule(entry('When a cell runs long, call progress()', 'when'))
        await store.encodeRule(entry('When searching, prefer exact phrases', 'when', { tool: 'web_search' }))
        await store.encodeRule(entry('Always be brief', 'always'))
        await store.encodeLesson(entry('Scratchpad cells share state', 'lesson', { tool: 'scratchpad' }))
        await store.encodeLesson(entry('Scratchpad has pandas preinstalled', 'lesson', { topic: 'scratchpad' }))
        await store.encodeLesson(entry('Search results are cached an hour', 'lesson', { tool: 'web_search' }))
        await store.encodeLesson(entry('Unrelated lesson', 'lesson'))
        const scratchpad = (await store.recallToolWisdom('scratchpad')).map((e) => e.text)
        assert.deepEqual(new Set(scratchpad), new Set(['Scratchpad cells share state', 'Scratchpad has pandas preinstalled']))
        const search = (await store.recallToolWisdom('web_search')).map((e) => e.text)
        assert.deepEqual(new Set(search), new Set(['When searching, prefer exact phrases', 'Search results are cached an hour']))
        const all = (await store.recallToolWisdom()).map((e) => e.text)
        assert.ok(all.includes('When searching, prefer exact phrases'))
        assert.ok(all.includes('Scratchpad cells share state'))
        assert.ok(!all.includes('Always be brief'))
        assert.ok(!all.includes('When a cell runs long, call progress()'))
        assert.ok(!all.includes('Unrelated lesson'))
        // Tool wisdom decorates every tool of a turn from one read of the rules and lessons
        // (memory/engrams/tool-wisdom.ts): that is what the store answers tool by tool.
        const rules = (await store.read('rules')).entries
        const lessons = await store.recallLessons()
        for (const tool of ['scratchpad', 'web_search', 'other', undefined]) assert.deepEqual(toolWisdom(rules, lessons, tool), await store.recallToolWisdom(tool))
      }))

    test('rewriteIdentity replaces the profile snapshot', () =>
      withStore(async ({ store }) => {
        await store.rewriteIdentity([entry('Name: Jorge', 'profile'), entry('Timezone: PST', 'profile')])
        assert.deepEqual(
          (await store.recallIdentity()).map((e) => e.text),
          ['Name: Jorge', 'Timezone: PST'],
        )
        await store.rewriteIdentity([entry('Name: Jorge', 'profile'), entry('Timezone: CET', 'profile'), entry('Tools: uv', 'profile')])
        const identity = await store.recallIdentity()
        assert.deepEqual(
          identity.map((e) => e.text),
          ['Name: Jorge', 'Timezone: CET', 'Tools: uv'],
        )
        assert.ok(identity.every((e) => e.kind === 'profile'))
      }))

    test('rewriteAll replaces a file, and validates kinds', () =>
      withStore(async ({ store }) => {
        for (const text of ['a one', 'a two', 'a three']) await store.encodeLesson(entry(text, 'lesson', { ts: '2026-01-01' }))
        await store.rewriteAll('lessons', [entry('merged lesson', 'lesson', { ts: '2026-01-02', source: 'consolidation' })])
        const lessons = await store.recallLessons()
        assert.deepEqual(
          lessons.map((e) => [e.text, e.source]),
          [['merged lesson', 'consolidation']],
        )
        await store.encodeRule(entry('keep me', 'never'))
        await store.rewriteAll('rules', [entry('new always', 'always'), entry('new when', 'when')])
        const rules = await store.recallRules()
        assert.deepEqual(
          [rules.always.length, rules.never.length, rules.when.length],
          [1, 0, 1],
        )
        await assert.rejects(store.rewriteAll('rules', [entry('a lesson', 'lesson')]), { code: 'invalid_argument' })
        assert.equal((await store.recallRules()).always.length, 1, 'a rejected rewrite changes nothing')
      }))

    test('metadata and awkward text round-trip exactly', () =>
      withStore(async ({ store }) => {
        const text = 'Never write <!-- or --> in a comment\nsecond line'
        await store.encodeLesson(entry(text, 'lesson', { meta: { origin: 'cerebellum', cell: '12' }, ts: '2026-02-01', confidence: 'low' }))
        const [lesson] = await store.recallLessons()
        assert.equal(lesson?.text, text)
        assert.equal(lesson?.meta.origin, 'cerebellum')
        assert.equal(lesson?.meta.cell, '12')
        assert.equal(lesson?.confidence, 'low')
        const read = await store.read('lessons')
        assert.equal(read.entries.length, 1)
        assert.deepEqual(read.problems, [])
      }))

    test('bad input is rejected with invalid_argument', () =>
      withStore(async ({ store }) => {
        await assert.rejects(store.encodeRule(entry('x', 'lesson')), { code: 'invalid_argument' })
        await assert.rejects(store.encodeLesson(entry('x', 'always')), { code: 'invalid_argument' })
        await assert.rejects(store.encodeLesson(entry('   ', 'lesson')), { code: 'invalid_argument' })
        assert.deepEqual(await store.recallLessons(), [])
      }))

    test("writeTopic replaces a topic's text under its lock; the function gets the text as it is", () =>
      withStore(async ({ store }) => {
        if (!store.writeTopic) return
        await store.writeTopic('tea', (text) => {
          assert.equal(text, null)
          return '# tea\nfree text\n'
        })
        assert.equal(await store.recallTopic('tea'), '# tea\nfree text\n')
        assert.deepEqual(await store.listTopics(), ['tea'])
        await store.encodeLesson(entry('Brew green tea at 80C', 'lesson', { topic: 'tea' }))
        let seen: string | null = null
        await store.writeTopic('tea', (text) => {
          seen = text
          return null
        })
        assert.match(seen ?? '', /free text[\s\S]*Brew green tea at 80C/)
        await store.writeTopic('coffee', () => null)
        assert.deepEqual(await store.listTopics(), ['tea'], 'left alone: no topic created')
        for (const slug of ['Not A Slug', '../escape', '']) await assert.rejects(store.writeTopic(slug, () => 'x'), { code: 'invalid_argument' }, slug)
      }))

    test('archive: forgotten entries and topics are kept by name, moved out and back, set aside and purged', () =>
      withStore(async ({ store }) => {
        const { archive } = store
        if (!archive) return
        assert.deepEqual(await archive.list(), [])
        assert.equal(await archive.read('forgotten/rules'), null)
        await archive.updateEntries('rules', (text) => {
          assert.equal(text, '')
          return '# Forgotten rules\n\n- Guess facts <!-- kind:never -->\n'
        })
        await archive.updateEntries('rules', (text) => `${text}- Skip tests <!-- kind:never -->\n`)
        await archive.updateEntries('lessons', () => null)
        assert.equal(await archive.read('forgotten/rules'), '# Forgotten rules\n\n- Guess facts <!-- kind:never -->\n- Skip tests <!-- kind:never -->\n')
        assert.deepEqual(await archive.list(), ['forgotten/rules'], 'nothing left for a change that wrote nothing')
        assert.deepEqual((await store.read('rules')).entries, [], 'the live file is another')
        assert.equal(await archive.read('../memory/rules'), null)

        assert.equal(await archive.forgetTopic('tea', '2026-03-04T10-00-00-000Z'), false, 'no live topic')
        await store.encodeLesson(entry('Brew green tea at 80C', 'lesson', { topic: 'tea' }))
        const green = await store.recallTopic('tea')
        assert.equal(await archive.forgetTopic('tea', '2026-03-04T10-00-00-000Z'), true)
        assert.equal(await store.recallTopic('tea'), null)
        assert.deepEqual(await store.listTopics(), [], 'an archived topic is no topic')
        assert.equal(await archive.read('forgotten/topics/tea'), green)
        await store.encodeLesson(entry('Brew black tea at 95C', 'lesson', { topic: 'tea' }))
        assert.equal(await archive.restoreTopic('tea'), 'occupied', 'a live topic is never overwritten')
        assert.equal(await archive.forgetTopic('tea', '2026-03-04T11-00-00-000Z'), true)
        assert.deepEqual(await archive.list(), ['forgotten/rules', 'forgotten/topics/tea', 'forgotten/topics/tea.2026-03-04T11-00-00-000Z'])
        assert.equal(await archive.read('forgotten/topics/tea.2026-03-04T11-00-00-000Z'), green, 'the earlier one set aside')
        assert.equal(await archive.restoreTopic('tea'), 'restored')
        assert.match((await store.recallTopic('tea')) ?? '', /black tea/)
        assert.equal(await archive.restoreTopic('tea'), 'missing')
        assert.equal(await archive.purgeTopic('tea'), 2, 'the live topic and the set-aside copy')
        assert.equal(await store.recallTopic('tea'), null)
        assert.deepEqual(await archive.list(), ['forgotten/rules'])
        assert.equal(await archive.purgeTopic('tea'), 0)
      }))

    test('archive.put puts what another store archived as it is: list, read and restoreTopic find it, a rerun changes nothing', () =>
      withStore(async ({ store }) => {
        if (!store.archive) return
        await store.archive.updateEntries('lessons', () => '# Forgotten lessons\n\n- Guess facts <!-- kind:never -->\n')
        await store.encodeLesson(entry('Brew green tea at 80C', 'lesson', { topic: 'tea' }))
        await store.archive.forgetTopic('tea', '2026-03-04T10-00-00-000Z')
        await store.encodeLesson(entry('Brew black tea at 95C', 'lesson', { topic: 'tea' }))
        await store.archive.forgetTopic('tea', '2026-03-04T11-00-00-000Z')
        const names = await store.archive.list()
        assert.deepEqual(names, ['forgotten/lessons', 'forgotten/topics/tea', 'forgotten/topics/tea.2026-03-04T11-00-00-000Z'])
        const texts = new Map<string, string>()
        for (const name of names) texts.set(name, (await store.archive.read(name)) ?? '')

        const other = await make()
        try {
          const archive = other.store.archive
          assert.ok(archive)
          for (const [name, text] of texts) assert.equal(await archive.put(name, text), 'written', name)
          for (const [name, text] of texts) assert.equal(await archive.put(name, text), 'there', name)
          assert.equal(await archive.put('forgotten/lessons', 'another text\n'), 'occupied')
          assert.deepEqual(await archive.list(), names)
          for (const [name, text] of texts) assert.equal(await archive.read(name), text, name)
          assert.equal(await archive.restoreTopic('tea'), 'restored')
          assert.match((await other.store.recallTopic('tea')) ?? '', /black tea/)
          for (const name of ['forgotten/project/rules', '../memory/rules', 'forgotten/notes', 'forgotten/topics/Not A Slug']) {
            await assert.rejects(archive.put(name, 'x'), { code: 'invalid_argument' }, name)
          }
        } finally {
          await other.cleanup()
        }
      }))

    test('concurrent encodes in one process all land, each once', () =>
      withStore(async ({ store }) => {
        const texts = Array.from({ length: 40 }, (_, i) => `parallel lesson number ${i}`)
        const outcomes = await Promise.all([...texts, ...texts].map((text) => store.encodeLesson(entry(text, 'lesson'))))
        assert.equal(outcomes.filter((o) => o.kind === 'added').length, 40)
        assert.equal(outcomes.filter((o) => o.kind === 'duplicate').length, 40)
        const stored = (await store.recallLessons()).map((e) => e.text).sort()
        assert.deepEqual(stored, [...texts].sort())
      }))
  })
}
