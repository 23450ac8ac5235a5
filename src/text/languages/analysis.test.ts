import assert from 'node:assert/strict'
import { test } from 'node:test'
import { languageForAnalysis, fullyAnalysedLanguages } from './analysis.ts'

test('each message is given its language by script, and Latin text by its commonest short words', () => {
  const cases: Array<[string, string]> = [
    ['デプロイトークンはどのくらいの頻度でローテーションされますか？', 'ja'],
    ['東京都に住んでいます', 'ja'],
    ['部署令牌多久轮换一次？', 'zh'],
    ['배포 토큰은 얼마나 자주 교체되나요?', 'ko'],
    ['Wie oft werden die Deploy-Tokens rotiert?', 'de'],
    ['Les jetons de déploiement sont renouvelés tous les mois', 'fr'],
    ['¿Con qué frecuencia se rotan los tokens de despliegue?', 'es'],
    ['How often are the deploy tokens rotated?', 'en'],
    ['Как часто меняются токены?', 'ru'],
    ['ok', 'und'],
    ['', 'und'],
  ]
  for (const [text, code] of cases) assert.equal(languageForAnalysis(text).code, code, text)
  assert.equal(languageForAnalysis('How often are the deploy tokens rotated?').analysis, 'full')
  assert.equal(languageForAnalysis('Wie oft werden die Deploy-Tokens rotiert?').analysis, 'words')
  assert.deepEqual(fullyAnalysedLanguages(), ['English'])
})
