import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { makeTempHome } from '../testing/temp-home.ts'
import { relatedTerms } from './related-words.ts'
import { buildHypernymMap, relatedWordsFile } from '../../scripts/resources/wordnet.ts'
import { WordTable } from './word-table.ts'
import { hypernymLookup, hypernymMapOver, installedHypernymMap, nounLemma } from './wordnet.ts'

const temp = makeTempHome()
after(() => {
  temp.cleanup()
})

/** A three-level fragment in WordNet's own file formats: clarinet → woodwind → wind_instrument. */
function fixtureDict(): string {
  const dir = join(temp.home, 'dict')
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, 'index.noun'),
    [
      '  1 This software and database is being provided to you',
      'clarinet n 1 1 @ 1 0 00000100',
      'woodwind n 1 1 @ 1 0 00000200',
      'wind_instrument n 1 1 @ 1 0 00000300',
      'berry n 1 1 @ 1 0 00000400',
      'paris n 1 2 @i #p 1 0 00000700',
      'eye n 1 2 @ #p 1 0 00001100',
      '',
    ].join('\n'),
  )
  writeFileSync(
    join(dir, 'data.noun'),
    [
      '  1 This software and database is being provided to you',
      '00000100 06 n 01 clarinet 0 001 @ 00000200 n 0000 | a single-reed instrument',
      '00000200 06 n 02 woodwind 0 woodwind_instrument 0 001 @ 00000300 n 0000 | a wind instrument',
      '00000300 06 n 01 wind_instrument 0 001 @ 00000500 n 0000 | a musical instrument',
      '00000500 06 n 01 musical_instrument 0 000 | any device that makes music',
      '00000400 13 n 01 berry 0 001 @i 00000600 n 0000 | a small fruit',
      '00000600 13 n 01 edible_fruit 0 000 | fruit you can eat',
      '00000700 15 n 02 Paris 0 capital_of_France 0 002 @i 00000800 n 0000 #p 00000900 n 0000 | the capital of France',
      '00000800 15 n 01 national_capital 0 000 | the capital of a nation',
      '00000900 15 n 02 France 0 F.R. 0 002 #p 00001000 n 0000 #m 00001200 n 0000 | a republic in western Europe',
      '00001000 15 n 02 Europe 0 Eur. 0 000 | the 2nd smallest continent',
      '00001200 14 n 01 European_Union 0 000 | an international organization of European countries',
      '00001100 08 n 01 eye 0 002 @ 00001300 n 0000 #p 00001400 n 0000 | the organ of sight',
      '00001300 08 n 01 sense_organ 0 000 | an organ having nerve endings',
      '00001400 08 n 01 face 0 000 | the front of the human head',
      '',
    ].join('\n'),
  )
  return dir
}

describe('WordNet hypernyms', () => {
  it('follows the first sense up two levels (@ and @i, and holonyms of a named instance), splitting multi-word lemmas', () => {
    const map = buildHypernymMap(fixtureDict())
    assert.deepEqual(new Set(map.get('clarinet')), new Set(['woodwind', 'instrument', 'wind']))
    assert.deepEqual(new Set(map.get('woodwind')), new Set(['wind', 'instrument', 'musical']))
    assert.deepEqual(new Set(map.get('berry')), new Set(['edible', 'fruit']))
    // A named instance also brings what it is part or a member of, two levels up (truncations such
    // as "Eur." left out, initialisms kept); a common noun does not.
    assert.deepEqual(new Set(map.get('paris')), new Set(['national', 'capital', 'france', 'f.r.', 'europe', 'european', 'union']))
    assert.deepEqual(new Set(map.get('eye')), new Set(['sense', 'organ']))
    // Multi-word lemmas are not keys: a token is one word.
    assert.equal(map.has('wind_instrument'), false)
  })

  it('reads the map back from the shipped file format, and the shipped map knows its words', () => {
    const built = buildHypernymMap(fixtureDict())
    const shipped = hypernymMapOver(WordTable.build(Buffer.from(relatedWordsFile(built))))
    for (const [lemma, related] of built) assert.deepEqual(shipped.get(lemma), related)
    assert.equal(shipped.has('violin'), false)
    assert.equal(shipped.get('wood'), undefined)
    const installed = installedHypernymMap()
    assert.ok(installed)
    assert.ok(installed.get('clarinet')?.includes('woodwind'))
    assert.ok(installed.get('paris')?.includes('france'))
  })

  it('lemmatises plurals before looking up', () => {
    const lookup = hypernymLookup(buildHypernymMap(fixtureDict()))
    assert.deepEqual(new Set(lookup('clarinets')), new Set(['woodwind', 'instrument', 'wind']))
    assert.ok(lookup('berries').includes('fruit'))
    assert.deepEqual(lookup('violin'), [])
    assert.equal(nounLemma('children', (w) => w === 'child'), 'child')
  })

  it('feeds the related field: stems of the hypernyms of each distinct content word', () => {
    const lookup = hypernymLookup(buildHypernymMap(fixtureDict()))
    const related = relatedTerms('The clarinet, the clarinet and the clarinets', lookup)
    // "clarinet" once (distinct words), "clarinets" once more; hypernyms are stemmed like index terms.
    assert.equal(related.length, 6)
    assert.deepEqual(new Set(related), new Set(['woodwind', 'instrument', 'wind']))
    assert.deepEqual(relatedTerms('The clarinet', null), [])
  })
})
