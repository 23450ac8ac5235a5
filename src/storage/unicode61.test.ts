import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { unicode61Tokens } from './unicode61.ts'

test('unicode61Tokens folds and splits every letter and digit as FTS5 unicode61 remove_diacritics 2 does', () => {
  const db = new DatabaseSync(':memory:')
  try {
    db.exec("CREATE VIRTUAL TABLE f USING fts5(t, tokenize = 'unicode61 remove_diacritics 2'); CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    const insert = db.prepare('INSERT INTO f (rowid, t) VALUES (?, ?)')
    db.exec('BEGIN')
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue
      const char = String.fromCodePoint(cp)
      if (/[\p{L}\p{N}]/u.test(char)) insert.run(cp, `x${char}x`)
    }
    db.exec('COMMIT')
    const fts = new Map<number, string[]>()
    for (const row of db.prepare('SELECT doc, term FROM v ORDER BY doc, offset').iterate() as Iterable<{ doc: number; term: string }>) {
      const list = fts.get(row.doc) ?? []
      list.push(row.term)
      fts.set(row.doc, list)
    }
    const wrong: string[] = []
    for (const [cp, tokens] of fts) {
      const ours = unicode61Tokens(`x${String.fromCodePoint(cp)}x`)
      if (JSON.stringify(ours) !== JSON.stringify(tokens)) wrong.push(`U+${cp.toString(16)}: FTS5 ${JSON.stringify(tokens)}, ours ${JSON.stringify(ours)}`)
    }
    assert.deepEqual(wrong.slice(0, 20), [])
  } finally {
    db.close()
  }
})

test('analysed text: ASCII stems split on spaces, diacritics folded the FTS5 way', () => {
  assert.deepEqual(unicode61Tokens('caf\u00e9 ol\u00e9  2026 kmessage'), ['cafe', 'ole', '2026', 'kmessage'])
  assert.deepEqual(unicode61Tokens('\u03ac\u03c2 \u0439'), ['\u03ac\u03c3', '\u0439'])
  assert.deepEqual(unicode61Tokens(''), [])
})
