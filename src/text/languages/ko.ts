/** Korean (decision 0077; the format is language-table.ts). */
import type { LanguageTable } from './language-table.ts'

export const korean: LanguageTable = {
  code: 'ko',
  name: 'Korean',
  words: 'agglutinated',
  script: '\\p{Script=Hangul}',
  stopWords: ['은', '는', '이', '가', '을', '를', '에', '의', '입니다'],

  greetings: ['안녕하세요', '안녕하십니까', '안녕', '반갑습니다', '반가워요', '좋은 아침', '감사합니다', '고맙습니다', '고마워', '수고하세요', '수고하셨습니다', '잘 자', '안녕히'],
  questionWords: ['무엇', '뭐', '무슨', '어떻게', '어떤', '왜', '언제', '어디', '누구', '누가', '얼마나', '얼마', '몇'],
  questionEndings: ['까', '니까', '나요', '가요', '까요', '니', '냐', '죠'],
  requestMarkers: ['주세요', '주십시오', '해줘', '해 줘', '부탁', '하십시오', '합시다'],
  imperatives: [],
  heartbeats: ['하트비트', '정기 점검', '정기점검', '정기 순찰'],

  proceduralPatterns: [
    '절차',
    '단계',
    '방법|하는 법',
    '셋업|구축',
    '설치',
    '명령어|명령',
    '워크플로',
    '배포',
    '설정|구성',
    '체크리스트|런북',
    '^\\s*[0-9]+[.)]\\s*\\S',
    '(?:먼저|우선).{0,80}(?:그다음|그 다음|다음에|그리고 나서)',
  ],

  // Not 늘 ("always"): it also opens 늘어나다 ("to increase").
  always: ['항상', '언제나', '반드시', '꼭', '앞으로', '매번'],
  never: ['절대', '결코'],
  negations: ['지 마', '지마', '않', '안 ', '못 ', '말고'],
  addressee: ['주세요', '주십시오', '해줘', '해 줘', '하세요', '하십시오', '마세요', '마십시오', '해요', '드려요'],
  firstPerson: ['저는', '나는', '제가', '내가', '저도', '나도'],
  preferencePatterns: ['(?:을|를|이|가)\\s*(?:더\\s*)?(?:좋아해|좋아합니다|좋아요|선호|싫어)'],

  dateUnits: { year: ['년'], month: ['월'], day: ['일'] },
}
