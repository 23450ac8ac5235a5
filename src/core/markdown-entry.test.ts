import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { EngramEntry } from './engram.ts'
import {
  emptyMemoryFile,
  entriesOf,
  formatEntryLine,
  insertEntry,
  parseEntryLine,
  parseMemoryFile,
  problemsOf,
  replaceEntries,
  sanitizeMetaValue,
  serializeMemoryFile,
} from './markdown-entry.ts'
import { SEED_LESSONS, SEED_PROFILE, SEED_RULES } from './test-support/anton-seed-examples.ts'


function entry(text: string, kind: EngramEntry['kind'], extra: Partial<EngramEntry> = {}): EngramEntry {
  return { text, kind, meta: {}, ...extra }
}

describe('markdown-entry: the seed examples', () => {
  test('rules.md parses into its sections and round-trips exactly', () => {
    const doc = parseMemoryFile(SEED_RULES, 'rules')
    const entries = entriesOf(doc)
    assert.deepEqual(
      entries.map((e) => [e.kind, e.confidence, e.source, e.ts]),
      [
        ['always', 'high', 'user', '2026-02-27'],
        ['always', 'high', 'consolidation', '2026-02-27'],
        ['never', 'high', 'consolidation', '2026-02-27'],
        ['when', 'medium', 'consolidation', '2026-02-27'],
      ],
    )
    assert.equal(entries[3]?.text, 'If fetching paginated API data → async + progress() between pages')
    assert.deepEqual(problemsOf(doc), [])
    assert.equal(serializeMemoryFile(doc), SEED_RULES)
    // Formatting the parsed entries again gives the seed's lines: the canonical order matches.
    assert.equal(serializeMemoryFile(replaceEntries(doc, entries)), SEED_RULES)
  })

  test('lessons.md and profile.md round-trip exactly, also through a rewrite', () => {
    for (const [text, kind] of [
      [SEED_LESSONS, 'lessons'],
      [SEED_PROFILE, 'profile'],
    ] as const) {
      const doc = parseMemoryFile(text, kind)
      assert.deepEqual(problemsOf(doc), [])
      assert.equal(serializeMemoryFile(doc), text)
      assert.equal(serializeMemoryFile(replaceEntries(doc, entriesOf(doc))), text)
    }
    const lessons = entriesOf(parseMemoryFile(SEED_LESSONS, 'lessons'))
    assert.deepEqual(
      lessons.map((e) => [e.kind, e.topic, e.ts]),
      [
        ['lesson', 'api-coingecko', '2026-02-27'],
        ['lesson', 'api-coingecko', '2026-02-27'],
        ['lesson', 'pandas', '2026-02-27'],
      ],
    )
    const profile = entriesOf(parseMemoryFile(SEED_PROFILE, 'profile'))
    assert.equal(profile[2]?.text, 'Expertise: Python, data analysis, API integrations')
    assert.deepEqual(profile[2]?.meta, {})
  })

  test('a new rules file has the seed layout, and inserts land in their sections', () => {
    let doc = emptyMemoryFile('rules')
    assert.equal(serializeMemoryFile(doc), '# Rules\n\n## Always\n\n## Never\n\n## When\n')
    for (const e of entriesOf(parseMemoryFile(SEED_RULES, 'rules')).reverse()) doc = insertEntry(doc, e)
    // Inserted in reverse, so the two "always" rules are swapped; everything else is the seed.
    const expected = SEED_RULES.split('\n')
    ;[expected[3], expected[4]] = [expected[4] as string, expected[3] as string]
    assert.equal(serializeMemoryFile(doc), expected.join('\n'))
  })
})

describe('markdown-entry: escaping', () => {
  const hostile = [
    'closes --> the comment',
    'opens <!-- a comment',
    'line one\nline two',
    'windows\r\nline',
    '  padded  ',
    'ends with a backslash \\',
    'literal \\n is not a newline',
    'tab\there',
    '<!--->',
    'a <!-- topic:fake --> b',
    'trailing comment <!-- ts:2020-01-01 -->',
    'unicode line\u2028separator',
  ]
  for (const text of hostile) {
    test(`round-trips ${JSON.stringify(text)}`, () => {
      const line = formatEntryLine(entry(text, 'lesson', { topic: 'x y', ts: '2026-01-01' }))
      assert.ok(!line.includes('\n'), 'one line')
      assert.equal(line.indexOf('<!--'), line.lastIndexOf('<!--'), 'only the metadata comment opens')
      const parsed = parseEntryLine(line, 'lesson')
      assert.ok(parsed?.ok)
      assert.equal(parsed.entry.text, text)
      assert.equal(parsed.entry.topic, 'x_y')
      assert.equal(parsed.entry.meta.esc, undefined, 'the escape flag is not metadata')
    })
  }

  test('hand-written backslashes are read literally', () => {
    const parsed = parseEntryLine('- Use C:\\new\\path for data <!-- ts:2026-01-01 -->', 'lesson')
    assert.ok(parsed?.ok)
    assert.equal(parsed.entry.text, 'Use C:\\new\\path for data')
  })

  test('metadata values lose spaces and cannot close the comment; unknown keys are kept', () => {
    assert.equal(sanitizeMetaValue(' a b\tc '), 'a_b_c')
    assert.equal(sanitizeMetaValue('x-->y'), 'x->y')
    const line = formatEntryLine(entry('t', 'lesson', { meta: { origin: 'cerebellum', ts: 'old' }, ts: '2026-03-01' }))
    assert.equal(line, '- t <!-- origin:cerebellum ts:2026-03-01 -->')
    const parsed = parseEntryLine(line, 'lesson')
    assert.ok(parsed?.ok)
    assert.deepEqual(parsed.entry.meta, { origin: 'cerebellum', ts: '2026-03-01' })
  })

  test('empty text and unwritable keys are rejected', () => {
    assert.throws(() => formatEntryLine(entry('  ', 'lesson')), { code: 'invalid_argument' })
    assert.throws(() => formatEntryLine(entry('t', 'lesson', { meta: { 'a b': '1' } })), { code: 'invalid_argument' })
  })
})

describe('markdown-entry: unreadable lines', () => {
  const GARBAGE = `# Rules
random note the user typed
## Always
- Keep answers short <!-- confidence:high -->
<<<<<<< HEAD
- broken meta <!-- nonsense -->

## Never
- Print secrets

## Ideas
- not a rule kind
`

  test('are reported with line numbers and kept verbatim through inserts and rewrites', () => {
    const doc = parseMemoryFile(GARBAGE, 'rules')
    assert.deepEqual(
      entriesOf(doc).map((e) => [e.kind, e.text]),
      [
        ['always', 'Keep answers short'],
        ['never', 'Print secrets'],
      ],
    )
    assert.deepEqual(
      problemsOf(doc).map((p) => [p.line, p.text]),
      [
        [2, 'random note the user typed'],
        [5, '<<<<<<< HEAD'],
        [6, '- broken meta <!-- nonsense -->'],
        [12, '- not a rule kind'],
      ],
    )
    assert.equal(serializeMemoryFile(doc), GARBAGE)

    const inserted = serializeMemoryFile(insertEntry(doc, entry('Cite sources', 'always')))
    assert.equal(inserted, GARBAGE.replace('<!-- confidence:high -->\n', '<!-- confidence:high -->\n- Cite sources\n'))

    const rewritten = serializeMemoryFile(replaceEntries(doc, [entry('Be kind', 'always'), entry('Ask when unsure', 'when')]))
    for (const problem of problemsOf(doc)) assert.ok(rewritten.split('\n').includes(problem.text), problem.text)
    assert.ok(!rewritten.includes('Keep answers short'))
    assert.ok(!rewritten.includes('Print secrets'))
    assert.match(rewritten, /## Always\n- Be kind\n<<<<<<< HEAD/)
    assert.match(rewritten, /\n## When\n- Ask when unsure\n$/)
    const again = parseMemoryFile(rewritten, 'rules')
    assert.equal(problemsOf(again).length, 4)
    assert.deepEqual(
      entriesOf(again).map((e) => e.text),
      ['Be kind', 'Ask when unsure'],
    )
  })

  test('CRLF files keep their line endings', () => {
    const text = '# Lessons\r\n- one <!-- ts:2026-01-01 -->\r\n'
    const doc = parseMemoryFile(text, 'lessons')
    assert.equal(entriesOf(doc)[0]?.ts, '2026-01-01')
    assert.equal(serializeMemoryFile(doc), text)
  })

  test('a file without a title gets one on write; kinds must fit the file', () => {
    const doc = parseMemoryFile('- fact\n', 'lessons')
    assert.equal(serializeMemoryFile(insertEntry(doc, entry('second', 'lesson'))), '# Lessons\n- fact\n- second\n')
    assert.throws(() => insertEntry(doc, entry('x', 'always')), { code: 'invalid_argument' })
    assert.equal(serializeMemoryFile(insertEntry(emptyMemoryFile('topic', 'pandas'), entry('x', 'lesson'))), '# pandas\n- x\n')
  })
})

describe('markdown-entry: files written by other tools', () => {
  test('a file of bare carriage returns is read line by line and written back with them', () => {
    const text = '# Lessons\r- Tea is brewed at 80°C <!-- ts:2026-01-02 -->\r- Coffee at 92°C\r'
    const doc = parseMemoryFile(text, 'lessons')
    assert.deepEqual(entriesOf(doc).map((e) => e.text), ['Tea is brewed at 80°C', 'Coffee at 92°C'])
    assert.deepEqual(problemsOf(doc), [])
    assert.equal(serializeMemoryFile(doc), text)
    const after = serializeMemoryFile(insertEntry(doc, entry('Matcha at 70°C', 'lesson')))
    assert.equal(after, `${text}- Matcha at 70°C\r`)
  })

  test('a byte-order mark before the title or the first entry is read past and kept', () => {
    const titled = parseMemoryFile('\uFEFF# Rules\n\n## Always\n- Use httpx\n', 'rules')
    assert.deepEqual(entriesOf(titled).map((e) => e.text), ['Use httpx'])
    assert.ok(serializeMemoryFile(titled).startsWith('\uFEFF# Rules'))
    const bare = parseMemoryFile('\uFEFF- Prefers tea\n', 'profile')
    assert.deepEqual(entriesOf(bare).map((e) => e.text), ['Prefers tea'])
  })

  test('a ts that is no date is reported; the entry is read without it and its line kept', () => {
    const text = '# Lessons\n- x <!-- ts:yesterday -->\n- y <!-- ts:2026-02-30 -->\n- z <!-- ts:2026-03-01T10:00:00Z -->\n'
    const doc = parseMemoryFile(text, 'lessons')
    assert.deepEqual(entriesOf(doc).map((e) => [e.text, e.ts, e.meta?.ts]), [
      ['x', undefined, 'yesterday'],
      ['y', undefined, '2026-02-30'],
      ['z', '2026-03-01T10:00:00Z', '2026-03-01T10:00:00Z'],
    ])
    assert.deepEqual(problemsOf(doc).map((p) => p.line), [2, 3])
    assert.equal(serializeMemoryFile(replaceEntries(doc, entriesOf(doc))), text)
  })

  test('lines with control characters or bytes that are not UTF-8 are not entries', () => {
    const doc = parseMemoryFile('# Lessons\n- a\u0000b\n- caf\udce9\n- tab\tis text\n', 'lessons')
    assert.deepEqual(entriesOf(doc).map((e) => e.text), ['tab\tis text'])
    assert.deepEqual(problemsOf(doc).map((p) => p.reason), ['holds control characters', 'holds bytes that are not UTF-8 text'])
  })
})
