/**
 * Classification in every language (issue 32, decision 0077), through the session path an agent
 * uses (`createMind` → `mind.session(id, { user })`): the message type and its priming budget in
 * Japanese, Chinese, Korean and German (and French and Spanish, table-driven); a how-to episode in
 * Japanese and in German sorted as a procedure by daily consolidation (the fake model server
 * distils it; offline it waits for a model, as English episodes do); standing instructions and
 * preferences recognised by the offline rules; and numbers and dates (漢数字, full-width digits,
 * German month names) recognised where consolidation checks a candidate's facts against its sources.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { consolidationModel } from '../src/memory/consolidation/test-support/consolidation-kills.ts'
import { unsupportedFacts } from '../src/memory/consolidation/text-facts.ts'
import { createMind } from '../src/mind.ts'
import { internalsOf } from '../src/mind-internals.ts'
import { startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const read = (path: string): string => (existsSync(path) ? readFileSync(path, 'utf8') : '')

/** The seed's budgets (priming/settings.ts). */
const BUDGET = { greeting: 500, question: 1500, request: 3000, heartbeat: 200 } as const

/** "How often are deploy tokens rotated?" (the message), a real greeting and a request, per language. */
const MESSAGES: Array<{ language: string; question: string; greetings: string[]; request: string }> = [
  { language: 'Japanese', question: 'デプロイトークンはどのくらいの頻度でローテーションされますか？', greetings: ['こんにちは', 'おはようございます！', 'ありがとうございました'], request: 'ステージングのデプロイ手順を教えてください' },
  { language: 'Chinese', question: '部署令牌多久轮换一次？', greetings: ['你好', '谢谢！', '早上好'], request: '请帮我部署测试服务器' },
  { language: 'Korean', question: '배포 토큰은 얼마나 자주 교체되나요?', greetings: ['안녕하세요', '감사합니다!'], request: '테스트 서버를 재시작해 주세요' },
  { language: 'German', question: 'Wie oft werden die Deploy-Tokens rotiert?', greetings: ['Hallo!', 'Guten Morgen, wie geht es dir?', 'Vielen Dank'], request: 'Bitte starte den Testserver neu' },
  { language: 'French', question: 'À quelle fréquence les jetons de déploiement sont-ils renouvelés ?', greetings: ['Bonjour !', 'Merci beaucoup'], request: 'Redémarre le serveur de test, s’il te plaît' },
  { language: 'Spanish', question: '¿Con qué frecuencia se rotan los tokens de despliegue?', greetings: ['¡Hola!', 'Buenos días', 'Muchas gracias'], request: 'Reinicia el servidor de pruebas, por favor' },
]

test('message types in six languages through the session: the question gets the question budget (not the greeting one), greetings the greeting budget, requests the request budget', async (t) => {
  const temp = makeTempHome('engram-languages-types-')
  t.after(temp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
  t.after(() => mind.close())
  let n = 0
  const typeOf = async (message: string): Promise<{ type: string; budget: number }> => {
    const session = mind.session(`s-${n++}`, { user: 'ada' })
    const turn = await session.begin(message)
    await session.end(turn, 'OK.')
    clock.advance(1_000)
    return { type: turn.type, budget: turn.budgets.priming.budget }
  }
  for (const { language, question, greetings, request } of MESSAGES) {
    assert.deepEqual(await typeOf(question), { type: 'question', budget: BUDGET.question }, `${language}: ${question}`)
    for (const greeting of greetings) assert.deepEqual(await typeOf(greeting), { type: 'greeting', budget: BUDGET.greeting }, `${language}: ${greeting}`)
    assert.deepEqual(await typeOf(request), { type: 'request', budget: BUDGET.request }, `${language}: ${request}`)
  }
  // The English rules are untouched.
  assert.deepEqual(await typeOf('How often are deploy tokens rotated?'), { type: 'question', budget: BUDGET.question })
  assert.deepEqual(await typeOf('hi'), { type: 'greeting', budget: BUDGET.greeting })
  assert.deepEqual(await typeOf('ハートビート: 定期巡回'), { type: 'heartbeat', budget: BUDGET.heartbeat })
  await mind.idle()
})

test('standing instructions and preferences in Japanese, Chinese, Korean, German, French and Spanish: the offline rules recognise them at the end of the turn', async (t) => {
  const temp = makeTempHome('engram-languages-rules-')
  t.after(temp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null, settings: { 'memory.extractFromTurns': true } })
  t.after(() => mind.close())
  const said: Array<{ message: string; kind: 'always' | 'never' | 'profile' } | { message: string; kind: 'nothing' }> = [
    { message: '常にpsqlコマンドを示してください。', kind: 'always' },
    { message: 'パスワードは決して表示しないでください。', kind: 'never' },
    { message: '私は短い回答が好きです。', kind: 'profile' },
    { message: '私はいつもコーヒーを飲みます。', kind: 'nothing' },
    { message: '请总是用中文回答我。', kind: 'always' },
    { message: '请总是用不同的颜色标出错误。', kind: 'always' },
    { message: '下班以后请提醒我。', kind: 'nothing' },
    { message: '서버 부하가 늘어나지 않도록 해 주세요.', kind: 'nothing' },
    { message: '항상 한국어로 대답해 주세요.', kind: 'always' },
    { message: 'Antworte mir immer auf Deutsch', kind: 'always' },
    { message: 'Ich trinke immer Kaffee am Morgen.', kind: 'nothing' },
    { message: 'Warum antwortest du immer auf Englisch?', kind: 'nothing' },
    { message: 'Réponds-moi toujours en français.', kind: 'always' },
    { message: "N'utilise jamais de tabulations.", kind: 'never' },
    { message: 'Prefiero respuestas cortas.', kind: 'profile' },
  ]
  let n = 0
  for (const { message } of said) {
    const session = mind.session(`r-${n++}`, { user: 'ada' })
    await session.end(await session.begin(message), 'OK.')
    clock.advance(1_000)
  }
  await mind.idle()
  const rules = read(join(temp.home, 'agents/default/users/ada/memory/rules.md'))
  const never = rules.slice(rules.indexOf('## Never'))
  const profile = (await internalsOf(mind).memory.profiles.facts('ada')).map((entry) => entry.text)
  for (const { message, kind } of said) {
    const words = message.replace(/[。.]$/, '')
    if (kind === 'always') assert.ok(rules.includes(words) && !never.includes(words), `an always-rule: ${message}\n${rules}`)
    if (kind === 'never') assert.ok(never.includes(words), `a never-rule: ${message}\n${rules}`)
    if (kind === 'profile') assert.ok(profile.some((fact) => fact.includes(words)), `a preference: ${message} in ${profile.join(' | ')}`)
    if (kind === 'nothing') assert.ok(!rules.includes(words) && !profile.some((fact) => fact.includes(words)), `a habit or a question is no instruction: ${message}`)
  }
  assert.match(rules, /method:rules/)
})

for (const { language, howTo, small } of [
  { language: 'Japanese', howTo: 'ステージング環境の更新手順：まずテストを実行し、次に更新スクリプトを実行する。', small: '今日は昼にラーメンを食べて、天気の話をした。' },
  { language: 'German', howTo: 'So richten wir den Staging-Server ein: zuerst die Tests laufen lassen, dann das Skript ausrollen.', small: 'Wir haben heute Mittag Pizza gegessen und über das Wetter geredet.' },
]) {
  test(`a how-to episode in ${language} is sorted as a procedure by daily consolidation (the fake model distils it); small talk is not; offline it waits for a model`, async (t) => {
    const temp = makeTempHome('engram-languages-procedure-')
    t.after(temp.cleanup)
    const distilled: string[] = []
    // The consolidation tests' fake model, its procedure-distillation calls recorded.
    const server = await startFakeOpenAiServer({
      onChat: (request) => {
        const schema = (request.body as { response_format?: { json_schema?: { name?: string } } }).response_format?.json_schema?.name
        if (schema === 'procedures') distilled.push(request.messages.map((message) => message.content).join('\n'))
        return consolidationModel(request)
      },
    })
    t.after(() => server.close())
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const talk = async (mind: Awaited<ReturnType<typeof createMind>>, session: string, user: string, message: string): Promise<void> => {
      const s = mind.session(session, { user })
      await s.end(await s.begin(message), 'OK.')
      await s.close()
      await mind.idle()
    }

    // Offline: the episode waits for a model (nothing is sorted without one, in any language).
    const offlineHome = makeTempHome('engram-languages-offline-')
    t.after(offlineHome.cleanup)
    const offline = await createMind({ home: offlineHome.home, env: offlineHome.env, ignoreConfigFile: true, clock, embedder: null, settings: { 'jobs.eager': false } })
    await talk(offline, 'ada-0', 'ada', howTo)
    await offline.maintain()
    clock.advanceDays(1)
    await offline.maintain()
    const [waiting] = await internalsOf(offline).backend.lifecycle.jobs(internalsOf(offline).agent, { kind: 'consolidation-daily', limit: 1 })
    assert.match(JSON.stringify(waiting?.result?.pending), /no model configured/)
    assert.deepEqual(await internalsOf(offline).backend.owned('user:ada').documents.list('procedure'), [])
    await offline.close()

    const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0, 'jobs.eager': false }
    const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, settings })
    t.after(() => mind.close())
    await talk(mind, 'ada-1', 'ada', howTo)
    await talk(mind, 'bob-1', 'bob', small)
    await mind.maintain()
    clock.advanceDays(1)
    await mind.maintain()
    const [job] = await internalsOf(mind).backend.lifecycle.jobs(internalsOf(mind).agent, { kind: 'consolidation-daily', limit: 1 })
    assert.equal(job?.status, 'done', JSON.stringify(job))
    assert.equal(distilled.length, 1, 'one distillation call, for ada\'s how-to')
    assert.ok(distilled[0]?.includes(howTo.slice(0, 12)), distilled[0])
    assert.ok(!distilled.some((text) => text.includes(small.slice(0, 12))), 'small talk is not sorted as a procedure')
    const procedure = await internalsOf(mind).backend.owned('user:ada').documents.read('procedure', 'deploy-staging-with-fly')
    assert.equal(procedure?.frontmatter.auto_distilled, true)
  })
}

test('numbers and dates in other scripts and languages are the facts consolidation checks: 漢数字, full-width digits, 年月日, Korean dates, European month names and number words', () => {
  // A candidate's date written another way is supported by its source; a different one is not.
  assert.deepEqual(unsupportedFacts('締め切りは2025年3月15日です。', '締め切りは二〇二五年三月十五日。'), [])
  assert.deepEqual(unsupportedFacts('締め切りは三月十五日です。', '締め切りは3月15日。'), [])
  assert.deepEqual(unsupportedFacts('移行は２０２５年に終わった。', '移行は2025年に終わった。'), [])
  assert.deepEqual(unsupportedFacts('サーバーは十五台ある。', 'サーバーは15台ある。'), [])
  assert.deepEqual(unsupportedFacts('마감은 2025년 3월 15일입니다.', '마감: 2025-03-15'), [])
  assert.deepEqual(unsupportedFacts('截止日期是3月15号。', '截止日期是三月十五日。'), [])
  assert.deepEqual(unsupportedFacts('Die Frist endet am 15. März 2025.', 'Die Frist endet am 2025-03-15.'), [])
  assert.deepEqual(unsupportedFacts('la date limite est le 15 mars 2025', 'deadline: March 15, 2025'), [])
  assert.deepEqual(unsupportedFacts('la fecha límite es el 15 de marzo de 2025', 'deadline: 2025-03-15'), [])
  assert.deepEqual(unsupportedFacts('締め切りは三月十六日です。', '締め切りは3月15日。'), ['三月十六日'])
  assert.deepEqual(unsupportedFacts('Die Frist endet am 16. März 2025.', 'Die Frist endet am 2025-03-15.'), ['16. März 2025'])
  assert.deepEqual(unsupportedFacts('サーバーは十六台ある。', 'サーバーは15台ある。'), ['十六'])
  // Number words of a table, only in that table's language: "once" in English is no eleven.
  assert.deepEqual(unsupportedFacts('La migration de la base a pris 3 heures.', 'La migration de la base a pris trois heures.'), [])
  assert.deepEqual(unsupportedFacts('El despliegue tarda 2 horas.', 'El despliegue tarda dos horas.'), [])
  assert.deepEqual(unsupportedFacts('El despliegue tarda 11 horas.', 'El despliegue tarda dos horas.'), ['11'])
  assert.deepEqual(unsupportedFacts('We met 11 times.', 'We met once and then again.'), ['11 times'])
})
