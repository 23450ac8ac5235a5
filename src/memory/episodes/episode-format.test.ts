import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type EpisodeMarker, extractiveNotice, formatEpisodeSection, parseEpisodeSections, parseMarker, recalledSection } from './episode-format.ts'
import { segmentAfter } from './session-events.ts'

const marker: EpisodeMarker = {
  session: 'odd --> <session>',
  turns: [2, 4],
  from: 'activity/2026-03-02.jsonl#L3',
  until: 'activity/2026-03-02.jsonl#L9',
  untilTs: '2026-03-02T10:05:00.000Z',
  method: 'llm',
  recorded: '2026-03-02T10:20:00.000Z',
}

describe('episode format', () => {
  it('round-trips sections, including a hand-written one, and a marker whose values contain -->', () => {
    const section = formatEpisodeSection({ time: '10:00', title: '## A\nlong   title', body: 'What happened.', resolved: ['bug A'], tasks: [], marker })
    const text = `# 2026-03-02\n\n## 08:00 — Hand-written note\n\nMet Bob.\n${section}`
    const sections = parseEpisodeSections(text)
    assert.deepEqual(
      sections.map((s) => s.heading),
      ['', '08:00 — Hand-written note', '10:00 — A long title'],
    )
    assert.equal(sections[1]?.marker, undefined)
    assert.deepEqual(sections[2]?.marker, marker)
    assert.match(sections[2]?.body ?? '', /^What happened\.\n\nResolved:\n- bug A$/)
    assert.equal(text.match(/-->/g)?.length, 1, 'the value cannot close the comment early')
    assert.equal(parseMarker('<!-- episode {not json} -->'), undefined)
  })

  it('numbers turns: a segment continuing a recorded turn starts at it, openers start new ones', () => {
    const at = (line: number, type: 'message_received' | 'response_sent' | 'tool_use', session = 's') => ({ ts: `2026-03-02T10:0${line}:00Z`, type, session, ref: `activity/2026-03-02.jsonl#L${line}` })
    const records = [at(1, 'message_received'), at(2, 'response_sent'), at(3, 'tool_use'), at(4, 'message_received'), at(5, 'response_sent', 'other')]
    const first = segmentAfter(records, 's', undefined)
    assert.deepEqual(first?.turns, [1, 2])
    assert.equal(first?.events.length, 4)
    const later = segmentAfter(records, 's', { lastFinalizedTurn: 1, untilTs: '2026-03-02T10:02:00Z', untilRef: 'activity/2026-03-02.jsonl#L2' })
    assert.deepEqual(later?.turns, [1, 2])
    assert.equal(later?.from.ref, 'activity/2026-03-02.jsonl#L3')
    assert.equal(segmentAfter(records, 's', { lastFinalizedTurn: 2, untilTs: '2026-03-02T10:04:00Z', untilRef: 'activity/2026-03-02.jsonl#L4' }), undefined)
  })

  it('recalls a section without its marker and extractive notice, the reason kept apart, a compressed lead included', () => {
    const fallback = 'no LLM configured (llm.provider / ENGRAM_LLM_PROVIDER is none)'
    const full = formatEpisodeSection({ time: '09:00', title: 'Export failed', body: `${extractiveNotice(fallback)}\n\n- [09:00] MSG< ada: the export failed (429).`, resolved: [], tasks: [], marker: { ...marker, method: 'extractive', fallback } })
    // A compressed section keeps the notice and the first request as one paragraph.
    const compressed = `\n## 10:00 — Archive\n\n${extractiveNotice(fallback)} - [10:00] MSG< ada: archive the invoices (done)._ ok\n`
    const [first, second] = parseEpisodeSections(`# 2026-03-02\n${full}${compressed}`).filter((section) => section.heading !== '')
    const one = recalledSection(first!)
    assert.equal(one.heading, '09:00 — Export failed')
    assert.equal(one.body, '- [09:00] MSG< ada: the export failed (429).')
    assert.equal(one.degraded, `extractive summary (no LLM summary: ${fallback})`)
    const two = recalledSection(second!)
    assert.equal(two.body, '- [10:00] MSG< ada: archive the invoices (done)._ ok', 'only the notice goes, up to its own end')
    assert.match(two.degraded ?? '', /^extractive summary/, 'the notice alone marks it, without a marker')
    assert.equal(recalledSection(parseEpisodeSections('## 11:00 — By hand\n\nMet Bob.')[0]!).degraded, undefined)
  })
})
