import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { wordVectorsFrom } from '../../llm/embedders/test-support/word-vectors.ts'
import { terms } from '../../text/analyse.ts'
import { createQueryExpander } from './query-expansion.ts'

const VECTORS = wordVectorsFrom([
  ['the', [1, 1, 1, 1]],
  ['instruments', [1, 0.2, 0, 0]],
  ['instrument', [1, 0.2, 0, 0.01]],
  ['violin', [0.9, 0.3, 0, 0]],
  ['guitar', [0.85, 0.35, 0.1, 0]],
  ['piano', [0.8, 0.4, 0.1, 0]],
  ['hiking', [0, 0, 1, 0.2]],
])

describe('query expansion by word vectors', () => {
  it('adds the nearest words the memory holds, not the query’s own stem, not stop words', () => {
    const expander = createQueryExpander(VECTORS, { minCosine: 0.5, perWord: 10 })
    expander.setVocabulary(new Set(terms('I play the violin and the guitar; we went hiking; the instrument').concat('the')))
    const expansion = expander.expand(['instruments'], new Set(['instrument']))
    assert.deepEqual([...expansion.keys()].sort(), ['guitar', 'violin'])
    for (const cosine of expansion.values()) assert.ok(cosine >= 0.5 && cosine <= 1)
  })

  it('keeps at most perWord neighbours and only above minCosine', () => {
    const expander = createQueryExpander(VECTORS, { minCosine: 0.5, perWord: 1 })
    expander.setVocabulary(new Set(terms('violin guitar piano hiking')))
    assert.deepEqual([...expander.expand(['instruments'], new Set()).keys()], ['violin'])
    assert.equal(expander.expand(['hiking'], new Set()).size, 0)
    assert.equal(expander.expand(['unknownword'], new Set()).size, 0)
  })

  it('follows the vocabulary as it grows', () => {
    const expander = createQueryExpander(VECTORS)
    expander.setVocabulary(new Set(terms('violin')))
    assert.deepEqual([...expander.expand(['instruments'], new Set()).keys()], ['violin'])
    expander.setVocabulary(new Set(terms('violin piano')))
    assert.deepEqual([...expander.expand(['instruments'], new Set()).keys()].sort(), ['piano', 'violin'])
  })
})
