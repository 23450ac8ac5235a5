import assert from 'node:assert/strict'
import { test } from 'node:test'
import { EngramError } from '../../core/errors.ts'
import type { Embedder } from '../../llm/contracts.ts'
import { createFakeEmbedder } from '../../testing/fake-models.ts'
import { bracketKeywords, contentWords, type MatchCandidate, matchProcedures } from './matching.ts'

const candidates: MatchCandidate[] = [
  { kind: 'skill', id: 'csv_summary', name: 'CSV Summary', whenToUse: 'User asks to explore, summarize, or describe a CSV file.' },
  { kind: 'procedure', id: 'deploy-staging', description: 'Deploy the web application to the staging servers' },
  { kind: 'procedure', id: 'db-backup', description: 'Back up the production database every night' },
]

test('content words drop stop words and stem', () => {
  assert.deepEqual([...contentWords('Please summarize the CSV files')].sort(), ['csv', 'file', 'summarize'])
  assert.deepEqual(bracketKeywords('run [Deploy] then [ db ] []'), ['deploy', 'db'])
})

test('stage 1: a [keyword] in brackets wins, score 1', async () => {
  const { matches } = await matchProcedures('do the usual [staging] thing', candidates)
  assert.deepEqual(matches[0], { kind: 'procedure', id: 'deploy-staging', stage: 'keyword', score: 1, reason: '[staging]' })
})

test('stage 2: content-word overlap ranks by the share of the candidate matched', async () => {
  const { matches } = await matchProcedures('Can you summarize this CSV file for me?', candidates)
  assert.equal(matches[0]?.id, 'csv_summary')
  assert.equal(matches[0]?.stage, 'lexical')
  assert.match(matches[0]?.reason ?? '', /csv/)
  assert.ok(!matches.some((m) => m.id === 'db-backup'))
})

test('stage 3: vectors only when an embedder is given; an embedder failure is a warning', async () => {
  const none = await matchProcedures('nightly backups of production', candidates)
  assert.ok(none.matches.every((m) => m.stage !== 'vector'))
  const embedder = createFakeEmbedder(64)
  const withVectors = await matchProcedures('backups of the prod databases', candidates, { embedder, minSimilarity: -1, minLexicalScore: 0.9 })
  assert.ok(withVectors.matches.some((m) => m.stage === 'vector'))
  assert.equal(embedder.calls[0]?.purpose, 'query')
  const failing: Embedder = { ...embedder, embed: async () => { throw new EngramError({ code: 'embed_failed', category: 'provider', message: 'down' }) } }
  const degraded = await matchProcedures('something unrelated entirely', candidates, { embedder: failing })
  assert.equal(degraded.warnings[0]?.type, 'embed_failed')
})
