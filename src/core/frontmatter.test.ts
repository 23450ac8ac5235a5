import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseFrontmatter, serializeFrontmatter } from './frontmatter.ts'

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
