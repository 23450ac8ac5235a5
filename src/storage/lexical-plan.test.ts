import assert from 'node:assert/strict'
import { test } from 'node:test'
import { allTerms, terms } from '../text/analyse.ts'
import { relatedTerms } from '../text/related-words.ts'
import { seededRandom } from '../test-support/seeded-random.ts'
import { ftsFields, kindToken } from './lexical-plan.ts'

// Pieces chosen to meet the analysis' edges at a line break: combining marks, final sigma,
// apostrophes, compatibility characters NFKC folds, scripts without spaces, long runs.
const PIECES = [
  'the deploy pipeline failed', 'Caroline’s dog', "didn't", "'quoted'", 'ΟΔΟΣ', 'Σ', 'e\u0301', '\u0301x', 'ﬁle', '①', '東京',
  'デプロイトークン', 'トークンの', '배포 토큰은', '令牌轮换', 'ﾛｰﾃｰｼｮﾝ',
  'x'.repeat(70), 'painting paintings', 'Tea? Coffee!', '\r', '\n', '\n\n', ' \n ', '\u00a0', '2023', 'Zoë', 'İstanbul', 'ǅ',
]

function randomText(random: () => number): string {
  const parts: string[] = []
  const n = Math.floor(random() * 12)
  for (let i = 0; i < n; i++) parts.push(PIECES[Math.floor(random() * PIECES.length)] as string)
  return parts.join(random() < 0.5 ? ' ' : '')
}

test('ftsFields analyses line by line exactly as the whole text is analysed, memo hits included, with and without neighbours', () => {
  const random = seededRandom(18)
  for (let i = 0; i < 3_000; i++) {
    const text = randomText(random)
    const near = randomText(random)
    const far = randomText(random)
    const expected = [allTerms(text).join(' '), terms(near).join(' '), terms(far).join(' '), relatedTerms(text).join(' '), kindToken('message')]
    for (let again = 0; again < 2; again++) {
      assert.deepEqual(ftsFields({ text, kind: 'message', context: { near, far } }), expected, JSON.stringify({ text, near, far }))
      assert.deepEqual(ftsFields({ text, kind: 'lesson' }), [expected[0], '', '', expected[3], kindToken('lesson')], JSON.stringify({ text }))
    }
  }
})
