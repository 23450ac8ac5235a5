import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type EpisodeMarker, formatEpisodeSection, parseEpisodeSections, parseMarker } from './episode-format.ts'
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
})
