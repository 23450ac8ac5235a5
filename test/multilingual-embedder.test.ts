/**
 * Dense recall across languages comes from a configured embedder (issue 32, decision 0076): the
 * offline analysis matches words, and a Japanese question shares no word with an English note. With
 * a multilingual model behind `embed.provider: openai-compatible` (docs/multilingual.md), the
 * question finds the note through the real embedder code, in `mind.memories.search` and in the
 * primed context of the user's next turn; without one, it does not. The model is the fake
 * OpenAI-compatible server answering with vectors of meaning: one axis per concept, whatever the
 * language it is said in, as a multilingual model places translations near one another.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createMind, type Mind } from '../src/index.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

/** Each concept, as it is written in the languages of the test. */
const CONCEPTS: readonly string[][] = [
  ['deploy', 'デプロイ', '部署', '배포'],
  ['token', 'トークン', '令牌', '토큰'],
  ['rotat', 'ローテーション', '轮换', '교체'],
  ['coffee', 'コーヒー', '咖啡', '커피'],
  ['garden', '庭', '花园', '정원'],
  ['invoice', '請求書', '发票', '청구서'],
]

/** Vector length: one axis per concept, one for the rest, padded to engram's smallest (8). */
const DIMENSIONS = 8

/** The fake multilingual model: a unit vector over the concepts a text mentions, plus one axis for the rest. */
function meaning(text: string): number[] {
  const lower = text.toLowerCase()
  const vector: number[] = CONCEPTS.map((forms) => (forms.some((form) => lower.includes(form)) ? 1 : 0))
  vector.push(0.2)
  while (vector.length < DIMENSIONS) vector.push(0)
  const norm = Math.hypot(...vector)
  return vector.map((value) => value / norm)
}

const NOTE = 'Deploy tokens are rotated every 90 days by the release job.'
const OTHERS = ['Ada drinks her coffee black, no sugar.', 'The garden shed key hangs by the back door.', 'Invoices go out on the first Monday of the month.']
const QUESTIONS = [
  { language: 'Japanese', text: 'デプロイトークンはどのくらいの頻度でローテーションされますか？' },
  { language: 'Chinese', text: '部署令牌多久轮换一次？' },
  { language: 'Korean', text: '배포 토큰은 얼마나 자주 교체되나요?' },
]

describe('a multilingual embedder finds an English note for a question in another language', () => {
  let server: FakeOpenAiServer
  let tmp: TempHome
  let withModel: Mind

  before(async () => {
    server = await startFakeOpenAiServer({ onEmbed: (request) => ({ vectors: request.input.map(meaning) }) })
    tmp = await makeTempHome()
    withModel = await createMind({
      home: tmp.home,
      ignoreConfigFile: true,
      env: { ...tmp.env, ENGRAM_EMBED_PROVIDER: 'openai-compatible', ENGRAM_EMBED_BASE_URL: server.url, ENGRAM_EMBED_MODEL: 'fake-multilingual', ENGRAM_EMBED_DIMENSIONS: String(DIMENSIONS) },
    })
    for (const text of [NOTE, ...OTHERS]) await withModel.memories.add({ user: 'ada', text })
  })

  after(async () => {
    await withModel?.close()
    await server?.close()
    await tmp?.cleanup()
  })

  for (const question of QUESTIONS) {
    test(`${question.language}: search and the next turn's primed context hold the note, for its user only`, async () => {
      const hits = await withModel.memories.search(question.text, { user: 'ada', limit: 3 })
      assert.equal(hits[0]?.text, NOTE, JSON.stringify(hits.map((hit) => hit.text)))
      const session = withModel.session(`ada-${question.language}`, { user: 'ada' })
      const turn = await session.begin(question.text)
      assert.equal(turn.type, 'question')
      assert.ok(turn.system.includes('rotated every 90 days'), turn.system)
      await session.end(turn, 'Every 90 days.')
      const bobs = await withModel.memories.search(question.text, { user: 'bob', limit: 3 })
      assert.ok(!bobs.some((hit) => hit.text === NOTE), "bob never gets ada's note")
    })
  }

  test('the embedder was asked through its API, and without it the words alone do not cross languages', async () => {
    assert.ok(server.requests.some((request) => request.path === '/v1/embeddings'))
    const home = await makeTempHome()
    const wordsOnly = await createMind({ home: home.home, ignoreConfigFile: true, env: { ...home.env, ENGRAM_EMBED_PROVIDER: 'none' } })
    try {
      for (const text of [NOTE, ...OTHERS]) await wordsOnly.memories.add({ user: 'ada', text })
      for (const question of QUESTIONS) {
        const hits = await wordsOnly.memories.search(question.text, { user: 'ada', limit: 3 })
        assert.ok(!hits.some((hit) => hit.text === NOTE), `${question.language}: no word in common, no hit: ${JSON.stringify(hits.map((hit) => hit.text))}`)
      }
    } finally {
      await wordsOnly.close()
      await home.cleanup()
    }
  })
})
