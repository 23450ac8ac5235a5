import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { bm25Scores, tokenize } from './text-ranking.ts'

describe('text ranking', () => {
  it('tokenizes: lowercases, drops stopwords, folds plurals, splits unspaced scripts into bigrams', () => {
    assert.deepEqual(tokenize('The Deploys of the Queries'), ['deploy', 'query'])
    assert.deepEqual(tokenize('デプロイ失敗'), ['デプ', 'プロ', 'ロイ', 'イ失', '失敗'])
    assert.deepEqual(tokenize('what is it', { keepStopwords: true }), ['what', 'is', 'it'])
  })

  it('scores rare terms above common ones and penalises long documents', () => {
    const docs = ['token renewed for deploy', 'deploy deploy deploy of the service went fine', 'deploy token expired and the deploy failed', 'lunch menu']
    const scores = bm25Scores('expired token', docs)
    assert.equal(scores[3], 0)
    assert.equal(scores[1], 0)
    assert.ok((scores[2] ?? 0) > (scores[0] ?? 0), 'the document with both terms, one of them rare, wins')
    const japanese = bm25Scores('デプロイ', ['デプロイに失敗した', '昼食のメニュー'])
    assert.ok((japanese[0] ?? 0) > 0 && japanese[1] === 0)
  })
})
