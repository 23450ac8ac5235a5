import assert from 'node:assert/strict'
import { test } from 'node:test'
import { detectLanguage, fullyAnalysedLanguages } from './detect.ts'

test('each text is given one language: by script, then Latin text by its stop words; the table that reads it is that language\'s', () => {
  // [text, language, table that reads it (undefined: the English rules)]
  const cases: Array<[string, string, string | undefined]> = [
    ['デプロイトークンはどのくらいの頻度でローテーションされますか？', 'ja', 'ja'],
    ['東京都に住んでいます', 'ja', 'ja'],
    ['常にpsqlコマンドを示してください', 'ja', 'ja'],
    ['部署令牌多久轮换一次？', 'zh', 'zh'],
    ['배포 토큰은 얼마나 자주 교체되나요?', 'ko', 'ko'],
    ['Wie oft werden die Deploy-Tokens rotiert?', 'de', 'de'],
    ['Ich bevorzuge kurze Antworten.', 'de', 'de'],
    ['Les jetons de déploiement sont renouvelés tous les mois', 'fr', 'fr'],
    ['À quelle fréquence les jetons sont-ils renouvelés ?', 'fr', 'fr'],
    ['¿Con qué frecuencia se rotan los tokens de despliegue?', 'es', 'es'],
    ['Prefiero respuestas cortas.', 'es', 'es'],
    ['How often are the deploy tokens rotated?', 'en', undefined],
    ['I went to see Die Hard with de la Cruz and the kids', 'en', undefined],
    ['I met Tanaka (田中) yesterday at the office', 'en', undefined],
    ['Il token di distribuzione è ruotato ogni novanta giorni', 'it', undefined],
    ['Com que frequência os tokens são trocados?', 'pt', undefined],
    ['Как часто меняются токены?', 'ru', undefined],
    // Too few marks to tell French from English (la against a): the English rules read it, as English.
    ['La migration a pris trois heures', 'en', undefined],
    ['Wow, those stairs look cool! Where were they taken?', 'en', undefined],
    ['ok', 'und', undefined],
    ['', 'und', undefined],
  ]
  for (const [text, code, table] of cases) {
    const language = detectLanguage(text)
    assert.equal(language.code, code, text)
    assert.equal(language.rules?.table.code, table, text)
  }
})

test('mixed scripts: the script with most letters wins, not the first one present', () => {
  // A Korean name in a Chinese sentence, a Japanese one in Korean, a Han character in Russian.
  assert.equal(detectLanguage('我昨天见了김민수，他说部署令牌每九十天轮换一次').code, 'zh')
  assert.equal(detectLanguage('다나카(タナカ) 씨가 배포 토큰은 구십 일마다 교체된다고 말했어요').code, 'ko')
  const russian = detectLanguage('Токен 令 меняется каждые девяносто дней')
  assert.equal(russian.code, 'ru')
  assert.equal(russian.rules, undefined)
})

test('what the offline analysis gives each language: English the full analysis, every other its words', () => {
  assert.equal(detectLanguage('How often are the deploy tokens rotated?').analysis, 'full')
  assert.equal(detectLanguage('Wie oft werden die Deploy-Tokens rotiert?').analysis, 'words')
  assert.equal(detectLanguage('デプロイトークンはどのくらいの頻度でローテーションされますか？').analysis, 'words')
  assert.deepEqual(fullyAnalysedLanguages(), ['English'])
})

test('a long text is judged by its opening: a pasted log\'s language shows in its first lines', () => {
  const text = `${'Die Tokens werden jeden Monat rotiert und das ist gut. '.repeat(40)}${'部署令牌多久轮换一次'.repeat(500)}`
  assert.equal(detectLanguage(text).code, 'de')
})
