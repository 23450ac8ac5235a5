import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { WordTable } from './word-table.ts'

const FILE = Buffer.from('paris national capital france\nclarinet woodwind instrument\nviolin\nparis later line\ncafé\nx\n')

describe('word table', () => {
  it('finds each line by its key, the first line of a repeated key winning, and nothing else', () => {
    const table = WordTable.build(FILE)
    assert.equal(table.size, 6)
    assert.equal(table.find('paris'), 0)
    assert.equal(table.rest(0), 'national capital france')
    assert.equal(table.find('clarinet'), 1)
    assert.equal(table.key(1), 'clarinet')
    assert.equal(table.find('violin'), 2)
    assert.equal(table.rest(2), '')
    assert.equal(table.find('x'), 5)
    for (const absent of ['', 'pari', 'pariss', 'national', 'violins', 'viol', 'café']) assert.equal(table.find(absent), -1, absent)
  })

  it('reads a file without a final newline', () => {
    const table = WordTable.build(Buffer.from('alpha one\nbeta'))
    assert.equal(table.size, 2)
    assert.equal(table.find('beta'), 1)
    assert.equal(table.key(1), 'beta')
    assert.equal(table.rest(0), 'one')
  })

  it('takes a shipped index that fits the file, and builds its own when it does not', () => {
    const index = Buffer.from(WordTable.build(FILE).index())
    const read = WordTable.read(FILE, index)
    assert.equal(read.find('clarinet'), 1)
    assert.deepEqual(Buffer.from(read.index()), index)
    // An index of another file (a stale one) is not trusted.
    const other = Buffer.from('violin\nclarinet\n')
    const rebuilt = WordTable.read(other, index)
    assert.equal(rebuilt.find('clarinet'), 1)
    assert.equal(rebuilt.find('paris'), -1)
    assert.equal(WordTable.read(FILE, Buffer.from('junk')).find('violin'), 2)
  })
})
