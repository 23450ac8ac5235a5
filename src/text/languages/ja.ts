/** Japanese (decision 0077; the format is language-table.ts). */
import type { LanguageTable } from './language-table.ts'

export const japanese: LanguageTable = {
  code: 'ja',
  name: 'Japanese',
  words: 'unspaced',
  script: '\\p{Script=Hiragana}\\p{Script=Katakana}',
  stopWords: ['の', 'は', 'が', 'を', 'に', 'で', 'と', 'です', 'ます'],

  greetings: ['こんにちは', 'こんばんは', 'おはよう', 'やあ', 'はじめまして', 'ありがとう', 'どうも', 'よろしく', 'お疲れ様', 'おつかれさま', 'さようなら', 'またね', 'じゃあね', 'おやすみ'],
  questionWords: ['何', 'なに', 'なん', 'どう', 'どの', 'どれ', 'どこ', 'どちら', 'いつ', 'だれ', '誰', 'なぜ', 'なんで', 'どうして', 'いくつ', 'いくら', 'どのくらい', 'どれくらい'],
  questionEndings: ['か', 'かな', 'かしら', 'の', 'ですか', 'ますか'],
  requestMarkers: ['ください', '下さい', 'てほしい', 'て欲しい', 'お願い', 'おねがい', 'してくれ', 'しよう', 'ましょう'],
  imperatives: [],
  heartbeats: ['ハートビート', '定期巡回', '定期チェック', '定期点検'],

  // The seed's twelve, in Japanese: procedure, steps, how to, set-up, install, command, workflow,
  // deploy, configure, checklist/runbook, numbered steps, first … then.
  proceduralPatterns: [
    '手順',
    'ステップ|段階的',
    'やり方|方法|仕方',
    'セットアップ|構築',
    'インストール|導入',
    'コマンド',
    'ワークフロー|作業の流れ',
    'デプロイ|リリース作業',
    '設定|構成',
    'チェックリスト|ランブック',
    '^\\s*[0-9]+[.)、]\\s*\\S',
    '(?:まず|最初に).{0,80}(?:次に|それから|その後)',
  ],

  always: ['常に', 'いつも', '必ず', '毎回', '今後は', 'これからは'],
  never: ['決して', '絶対に', '二度と'],
  negations: ['ない', 'ません', 'ないで', 'じゃない', 'ではない', 'なく'],
  addressee: ['ください', '下さい', 'てほしい', 'て欲しい', 'ように', 'てね', 'でね', 'こと。', 'お願い'],
  firstPerson: ['私は', '僕は', '俺は', 'わたしは', '私も', '僕も'],
  preferencePatterns: ['(?:が|の方が)(?:好き|大好き|いい|良い)', 'を好む', '好みです', 'が苦手', 'が嫌い'],

  dateUnits: { year: ['年'], month: ['月'], day: ['日'] },
  numerals: { 〇: 0, 零: 0, 一: 1, 二: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9, 十: 10, 百: 100, 千: 1000, 万: 10_000 },
}
