import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { describe, test } from 'node:test'
import { parseDocument, stringify } from 'yaml'
import { parseFrontmatter, readSimpleFrontmatter, serializeFrontmatter } from './frontmatter.ts'

// The seed's knowledge/ frontmatter (003, "YAML Frontmatter").
const SEED_KNOWLEDGE = `---
created_at: "2026-02-18T03:00:00+09:00"
updated_at: "2026-02-18T03:00:00+09:00"
source_episodes: 3
confidence: 0.9
auto_consolidated: true
version: 1
---
# Tea
Green tea is brewed at 80°C.
`

describe('frontmatter', () => {
  test('parses the seed example; dates stay strings', () => {
    const parsed = parseFrontmatter(SEED_KNOWLEDGE)
    assert.equal(parsed.problem, undefined)
    assert.equal(parsed.hasFrontmatter, true)
    assert.deepEqual(parsed.frontmatter, {
      created_at: '2026-02-18T03:00:00+09:00',
      updated_at: '2026-02-18T03:00:00+09:00',
      source_episodes: 3,
      confidence: 0.9,
      auto_consolidated: true,
      version: 1,
    })
    assert.equal(parsed.body, '# Tea\nGreen tea is brewed at 80°C.\n')
  })

  test('unquoted dates are strings too', () => {
    assert.deepEqual(parseFrontmatter('---\ncreated_at: 2026-02-18\nat: 2026-02-18T03:00:00Z\n---\nx').frontmatter, {
      created_at: '2026-02-18',
      at: '2026-02-18T03:00:00Z',
    })
  })

  test('serialize then parse gives the same data', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ description: '手順の説明', confidence: 0.5, success_count: 0, protected: false, created_at: '2026-02-18T03:00:00+09:00' }, 'Steps:\n1. a\n'],
      [{ tags: ['a', 'b'], nested: { x: 1 }, multi: 'line one\nline two', tricky: '---', colon: 'a: b' }, ''],
      [{}, 'no frontmatter at all\n'],
      [{}, '---\nbody that looks like frontmatter\n---\n'],
      [{ a: 1 }, '---\nbody starting with a rule\n'],
    ]
    for (const [frontmatter, body] of cases) {
      const parsed = parseFrontmatter(serializeFrontmatter(frontmatter, body))
      assert.equal(parsed.problem, undefined)
      assert.deepEqual(parsed.frontmatter, frontmatter)
      assert.equal(parsed.body, body)
    }
  })

  test('text without frontmatter is all body', () => {
    assert.deepEqual(parseFrontmatter('# Hello\n---\nnot frontmatter\n'), { frontmatter: {}, body: '# Hello\n---\nnot frontmatter\n', hasFrontmatter: false })
    assert.deepEqual(parseFrontmatter('---\n---\nbody').frontmatter, {})
    assert.equal(parseFrontmatter('---\n---\nbody').body, 'body')
  })

  test('broken frontmatter keeps the whole file as body and reports the line', () => {
    const broken = '---\ntitle: ok\nbad: [unclosed\n---\nbody\n'
    const parsed = parseFrontmatter(broken)
    assert.equal(parsed.body, broken)
    assert.deepEqual(parsed.frontmatter, {})
    assert.ok(parsed.problem)
    assert.ok(parsed.problem.line >= 2, `line ${parsed.problem.line}`)
    assert.match(parsed.problem.reason, /not valid YAML/)

    const unclosed = parseFrontmatter('---\ntitle: x\nbody without end')
    assert.equal(unclosed.body, '---\ntitle: x\nbody without end')
    assert.match(unclosed.problem?.reason ?? '', /never closed/)

    const list = parseFrontmatter('---\n- a\n- b\n---\nbody')
    assert.match(list.problem?.reason ?? '', /mapping/)
    assert.equal(list.body, '---\n- a\n- b\n---\nbody')

    const duplicate = parseFrontmatter('---\na: 1\na: 2\n---\nbody')
    assert.ok(duplicate.problem, 'duplicate keys are a problem, not a silent overwrite')
  })

  test('CRLF frontmatter is read', () => {
    const parsed = parseFrontmatter('---\r\nversion: 2\r\n---\r\nbody\r\n')
    assert.deepEqual(parsed.frontmatter, { version: 2 })
    assert.equal(parsed.body, 'body\r\n')
  })
})

describe('frontmatter that cannot be read never throws', () => {
  test('an alias bomb is a problem, and the whole text is kept as the body', () => {
    const anchors = ['a: &a [x, x, x, x, x, x, x, x, x]']
    for (let i = 1; i < 10; i++) {
      const name = String.fromCharCode(97 + i)
      const previous = String.fromCharCode(96 + i)
      anchors.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`)
    }
    const text = `---\n${anchors.join('\n')}\n---\n# Body\n`
    const parsed = parseFrontmatter(text)
    assert.match(parsed.problem?.reason ?? '', /frontmatter cannot be read: Excessive alias count/)
    assert.equal(parsed.body, text)
    assert.deepEqual(parsed.frontmatter, {})
  })

  test('nesting too deep for the parser is a problem, not a stack overflow', () => {
    const text = `---\nkey: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n---\nbody\n`
    const parsed = parseFrontmatter(text)
    assert.ok(parsed.problem, 'reported')
    assert.equal(parsed.body, text)
  })

  test('a file of bare carriage returns is read as lines', () => {
    const parsed = parseFrontmatter('---\rconfidence: 0.9\r---\r# Tea\rGreen.\r')
    assert.equal(parsed.problem, undefined)
    assert.deepEqual(parsed.frontmatter, { confidence: 0.9 })
    assert.equal(parsed.body, '# Tea\nGreen.\n')
  })
})

describe('the reader of simple frontmatter gives what yaml gives', () => {
  /** What the `yaml` package (core schema) reads, or `undefined` when it reports an error. */
  const byYaml = (text: string): unknown => {
    const document = parseDocument(text, { schema: 'core', prettyErrors: false })
    return document.errors.length > 0 ? undefined : (document.toJS({ maxAliasCount: 100 }) ?? {})
  }

  /** A deterministic generator (mulberry32), so a failure is repeated by running the test again. */
  function random(seed: number): () => number {
    let state = seed
    return () => {
      state = (state + 0x6d2b79f5) | 0
      let t = Math.imul(state ^ (state >>> 15), 1 | state)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    }
  }

  // Pieces of keys and values, among them every indicator, number form, keyword and odd character
  // the core schema treats apart, so that generated lines hit the reader's edges.
  const KEYS = ['created_at', 'description', 'tags', 'confidence', 'a', 'b-c', '_x', 'null', 'True', 'false', '__proto__', 'key with space', '"quoted"', '1', 'x:y', '?', '-k', 'é']
  const PIECES = [
    'tea', 'Green tea', '2026-02-18T03:00:00+09:00', '2026-02-18', '0', '7', '007', '-3', '+4', '0.9', '0.80', '1.', '.5', '1e3', '1E-2', '0x1F', '0o17', '.inf', '-.Inf', '.nan', '9007199254740993', '123456789012345',
    '~', 'null', 'Null', 'NULL', 'true', 'TRUE', 'False', 'yes', 'no', 'on', 'off', '[]', '{}', '[a, b]', '{a: 1}', '"x"', '"a: b"', '"esc\\n"', '""', "''", "'it''s'", "'open", '"open', "it's", 'a: b', 'a:b', 'a #c', 'a#b', 'end:',
    '- x', '-x', '? q', ': v', ',x', 'x,y', '&anchor', '*alias', '!tag x', '|', '>', '%x', '@x', '`x`', '#c', 'a  b', ' lead', 'trail ', 'tab\there', 'ç日本', '😀', '\u00a0x', 'x\u2028y', '\ufeffx', '\u0085', '\u0007', '\ud800', '...', '---', '<<', 'https://x.y/z?q=1', 'C:\\path', '(1) x', '$x', 'a=b', 'x!', 'x?', 'x]', 'x}',
  ]

  function generated(next: () => number): string {
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T
    const lines: string[] = []
    const count = Math.floor(next() * 5)
    for (let i = 0; i < count; i++) {
      const key = next() < 0.85 ? pick(KEYS.slice(0, 8)) : pick(KEYS)
      const value = next() < 0.7 ? pick(PIECES) : `${pick(PIECES)}${pick([' ', '', ':', ' #', ', '])}${pick(PIECES)}`
      const shape = next()
      if (shape < 0.7) lines.push(`${key}: ${value}`)
      else if (shape < 0.8) lines.push(`${key}:`, ...Array.from({ length: Math.floor(next() * 3) + 1 }, () => `  - ${pick(PIECES)}`))
      else if (shape < 0.85) lines.push(`${key}:`)
      else if (shape < 0.9) lines.push(`${key}:  ${value}`)
      else lines.push(pick([`${key}:${value}`, `  ${key}: ${value}`, `# ${value}`, '', `- ${value}`, `${key}:`, `    - ${value}`, `  -   ${value}`, `${key}: ${value}\r`]))
    }
    return lines.length === 0 ? '' : `${lines.join('\n')}\n`
  }

  test('on generated frontmatter, hostile pieces among them, whatever the reader takes equals what yaml reads', () => {
    const next = random(18)
    let taken = 0
    for (let i = 0; i < 20_000; i++) {
      const text = generated(next)
      const simple = readSimpleFrontmatter(text)
      if (simple === undefined) continue
      taken++
      assert.deepStrictEqual(simple, byYaml(text), JSON.stringify(text))
      assert.deepEqual(Object.keys(simple), Object.keys(byYaml(text) as object), JSON.stringify(text))
    }
    // The comparison means something only if the reader takes a good share of what is generated.
    assert.ok(taken > 4_000, `taken ${taken}`)
  })

  test('every piece as a value, alone and in a list', () => {
    for (const piece of PIECES) {
      for (const text of [`k: ${piece}\n`, `k:\n  - ${piece}\n  - x\n`]) {
        const simple = readSimpleFrontmatter(text)
        if (simple !== undefined) assert.deepStrictEqual(simple, byYaml(text), JSON.stringify(text))
      }
    }
  })

  test('what engram writes is read by the reader itself, as yaml reads it', () => {
    const written = [
      { created_at: '2026-02-18T03:00:00+09:00', updated_at: '2026-02-18T03:00:00+09:00', source_episodes: 3, confidence: 0.9, auto_consolidated: true, version: 1 },
      { description: 'How the service answers under load', tags: ['ops', 'latency'], sources: [], confidence: 0.8 },
      { user: 'alice@example.com', updated_at: '2026-11-24T07:55:31.765Z', supersedes: 'topic-3', valid_from: '2026-01-01', valid_until: null },
      { description: 'a: colon, a #hash and it\'s', note: 'true', count: '12', empty: '' },
    ]
    for (const frontmatter of written) {
      const text = stringify(frontmatter, { lineWidth: 0 })
      const simple = readSimpleFrontmatter(text)
      assert.notEqual(simple, undefined, text)
      assert.deepStrictEqual(simple, byYaml(text))
      assert.deepStrictEqual(parseFrontmatter(serializeFrontmatter(frontmatter, 'body\n')).frontmatter, frontmatter)
    }
    // Escapes, nesting and text over lines are left to yaml, and come back the same.
    for (const frontmatter of [{ description: '"quoted"\nover two lines' }, { meta: { nested: [1, { deep: true }] } }]) {
      const text = stringify(frontmatter, { lineWidth: 0 })
      assert.equal(readSimpleFrontmatter(text), undefined, text)
      assert.deepStrictEqual(parseFrontmatter(serializeFrontmatter(frontmatter, 'body\n')).frontmatter, frontmatter)
    }
  })

  test('reading what engram writes does not load yaml', () => {
    const script = [
      "import { createRequire } from 'node:module'",
      `const { parseFrontmatter } = await import(${JSON.stringify(new URL('./frontmatter.ts', import.meta.url).href)})`,
      "const parsed = parseFrontmatter('---\\nconfidence: 0.8\\ntags:\\n  - a\\n---\\nbody\\n')",
      "const loaded = Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/yaml/'))",
      'console.log(JSON.stringify({ frontmatter: parsed.frontmatter, loaded }))',
    ].join('\n')
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
    assert.deepEqual(JSON.parse(out), { frontmatter: { confidence: 0.8, tags: ['a'] }, loaded: false })
  })
})
