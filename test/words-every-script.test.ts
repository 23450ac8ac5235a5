// @slow: four languages through sessions on both backends, PostgreSQL included
/**
 * Words in every script (decision 0076), through the path an agent uses: `createMind` →
 * `mind.session(id, { user })`, two users, conversations in Japanese, Chinese, Korean and German.
 * A word inside text written without spaces is found by `search_memory` and `mind.memories.search`;
 * priming's related-memory channel recalls the note for the question (asked as a question:
 * the message type is decided elsewhere, decision 0077); full-width and half-width, composed and
 * decomposed forms match; one user's notes never reach the other. On both backends.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind, type Mind } from '../src/index.ts'
import { internalsOf } from '../src/mind-internals.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { call } from './support/tool-calls.ts'

const HOUR = 3_600_000

type Target = { backend: 'embedded' } | { backend: 'postgres'; url: string }

interface Scenario {
  language: string
  user: 'ada' | 'bob'
  /** The note the user's agent keeps. */
  note: string
  /** Said in the conversation before it, so the index holds the language's messages too. */
  chatter: string[]
  /** A word or phrase inside the note's unspaced text. */
  query: string
  /** The question, in this language. */
  question: string
}

const SCENARIOS: Scenario[] = [
  {
    language: 'Japanese',
    user: 'ada',
    note: 'デプロイトークンは九十日ごとにローテーションします。担当はインフラチームです。',
    chatter: ['今日は新しいサーバーの設定をしました。', 'ログの保存期間は三十日です。'],
    query: 'トークンのローテーション',
    question: 'デプロイトークンはどのくらいの頻度でローテーションされますか？',
  },
  {
    language: 'Chinese',
    user: 'bob',
    note: '部署令牌每九十天轮换一次，由基础设施团队负责。',
    chatter: ['今天我们配置了新的服务器。', '日志保留三十天。'],
    query: '令牌轮换',
    question: '部署令牌多久轮换一次？',
  },
  {
    language: 'Korean',
    user: 'ada',
    note: '배포 토큰은 90일마다 교체됩니다. 담당은 인프라팀입니다.',
    chatter: ['오늘 새 서버를 설정했습니다.', '로그 보관 기간은 30일입니다.'],
    query: '토큰의 교체',
    question: '배포 토큰은 얼마나 자주 교체되나요?',
  },
  {
    language: 'German',
    user: 'bob',
    note: 'Die Deploy-Tokens werden alle neunzig Tage rotiert; zuständig ist das Infrastrukturteam.',
    chatter: ['Heute haben wir den neuen Server eingerichtet.', 'Die Protokolle werden dreißig Tage aufbewahrt.'],
    query: 'Tokens rotiert',
    question: 'Wie oft werden die Deploy-Tokens rotiert?',
  },
]

/** The related-memories section of a primed block (recent activity may quote the note too). */
function relatedSection(primed: string): string {
  return primed.split('### Related memories')[1]?.split('\n### ')[0] ?? ''
}

function wordsSuite(target: Target): void {
  describe(`words in every script through sessions (${target.backend})`, () => {
    let tmp: TempHome
    let mind: Mind
    const schema = freshSchema()
    const clock = new ManualClock('2026-03-02T09:00:00Z')

    before(async () => {
      tmp = makeTempHome('engram-words-')
      // Words only, no vectors: the hashing embedder of the tests matches letter n-grams in any
      // script and would find these notes without a word being right (the default GloVe would not).
      const words = { ...tmp.env, ENGRAM_EMBED_PROVIDER: 'none' }
      const env = target.backend === 'postgres' ? { ...words, ENGRAM_DATABASE_URL: target.url, ENGRAM_DATABASE_SCHEMA: schema } : words
      mind = await createMind({ home: tmp.home, env, ignoreConfigFile: true, clock })
      for (const scenario of SCENARIOS) {
        // The conversation first, each turn a new Session object, as a host would run it.
        for (const said of scenario.chatter) {
          const session = mind.session(`${scenario.user}-${scenario.language}`, { user: scenario.user })
          const turn = await session.begin(said)
          await session.end(turn, 'OK')
        }
        const session = mind.session(`${scenario.user}-${scenario.language}`, { user: scenario.user })
        const turn = await session.begin(scenario.note)
        const saved = await call(turn.tools, 'memorize', { entries: [{ text: scenario.note, kind: 'lesson' }] })
        assert.notEqual(saved.isError, true, saved.text)
        await session.end(turn, 'OK')
        clock.advance(HOUR)
      }
      // Asked two days later: the note is no longer in recent activity, only in memory.
      clock.advance(48 * HOUR)
    })
    after(async () => {
      await mind.close()
      if (target.backend === 'postgres') await dropSchema(target.url, schema)
      tmp.cleanup()
    })

    for (const scenario of SCENARIOS) {
      const other = scenario.user === 'ada' ? 'bob' : 'ada'

      test(`${scenario.language}: search_memory and mind.memories.search find a word inside the note, for its user only`, async () => {
        const tools = mind.agentTools({ sessionId: `${scenario.user}-later`, user: scenario.user })
        const found = await call(tools, 'search_memory', { query: scenario.query })
        assert.ok(found.text.includes(scenario.note), `search_memory ${scenario.query}: ${found.text}`)
        const hits = await mind.memories.search(scenario.query, { user: scenario.user, limit: 5 })
        assert.equal(hits[0]?.text, scenario.note, JSON.stringify(hits.map((hit) => hit.text)))
        const theirs = await call(mind.agentTools({ sessionId: `${other}-later`, user: other }), 'search_memory', { query: scenario.query })
        assert.ok(!theirs.text.includes(scenario.note), `${other} must not see ${scenario.user}'s note: ${theirs.text}`)
      })

      test(`${scenario.language}: the issue's question recalls the note through priming's related memories`, async () => {
        // Asked as a question: which type a message is belongs to the classifier (decision 0077).
        const scope = internalsOf(mind).scope(scenario.user)
        const primed = await internalsOf(mind).primer.prime({
          message: scenario.question,
          viewer: scope.viewer,
          activity: scope.view.activity,
          procedures: scope.procedures,
          type: 'question',
          inspect: true,
        })
        assert.ok(relatedSection(primed.text).includes(scenario.note), `primed for ${scenario.question}:\n${primed.text}`)
        const session = mind.session(`${scenario.user}-${scenario.language}-asks`, { user: scenario.user })
        const turn = await session.begin(scenario.question)
        // Through the session: the classifier reads it as a question in its language (decision
        // 0077), and the note is among the related memories primed for it.
        assert.equal(turn.type, 'question', `${scenario.question} is a question`)
        assert.ok(relatedSection(turn.systemParts.primed).includes(scenario.note), `${turn.type}:\n${turn.systemParts.primed}`)
        await session.end(turn, 'OK')
      })
    }

    test('status says which languages the memory is in and which get full analysis', async () => {
      const { languages } = await mind.status()
      assert.deepEqual(languages.full, ['English'])
      const found = new Map(languages.found.map((each) => [each.language, each.analysis]))
      for (const language of ['Japanese', 'Chinese', 'Korean', 'German']) assert.equal(found.get(language), 'words', JSON.stringify(languages))
    })

    test('full-width and half-width, composed and decomposed forms find each other', async () => {
      const notes = [
        { text: 'ﾊﾞｯｸｱｯﾌﾟは毎晩ＡＰＩサーバーで取る', query: 'バックアップ api' },
        { text: 'Der Schlüssel liegt im Tresor im Erdgeschoß'.normalize('NFD'), query: 'Schlüssel Tresor'.normalize('NFC') },
        { text: '비밀번호는 금고에 보관합니다'.normalize('NFD'), query: '비밀번호 금고'.normalize('NFC') },
        { text: 'カフェのWi-Fiパスワードは壁に貼ってある', query: 'ｶﾌｪ ＷＩ－ＦＩ' },
      ]
      for (const { text } of notes) await mind.memories.add({ user: 'ada', text, kind: 'lesson' })
      for (const { text, query } of notes) {
        const hits = await mind.memories.search(query, { user: 'ada', limit: 3 })
        assert.equal(hits[0]?.text, text, `${query}: ${JSON.stringify(hits.map((hit) => hit.text))}`)
      }
    })
  })
}

wordsSuite({ backend: 'embedded' })
onPostgres('words in every script', (url) => wordsSuite({ backend: 'postgres', url }))
