/** Spanish (decision 0077; the format is language-table.ts). */
import type { LanguageTable } from './language-table.ts'

export const spanish: LanguageTable = {
  code: 'es',
  name: 'Spanish',
  words: 'spaced',
  stopWords: ['el', 'los', 'las', 'y', 'es', 'que', 'en', 'un', 'una', 'por', 'con', 'para', 'mi', 'se', 'lo', 'del', 'cómo', 'qué', 'siempre', 'está', 'pero', 'muy', 'yo', 'de', 'la', 'nunca', 'prefiero', 'responde'],

  greetings: ['hola', 'buenos días', 'buenas tardes', 'buenas noches', 'buenas', 'gracias', 'muchas gracias', 'adiós', 'hasta luego', 'hasta pronto', 'saludos'],
  questionWords: ['qué', 'cómo', 'cuándo', 'dónde', 'quién', 'quiénes', 'cuál', 'cuáles', 'cuánto', 'cuántos', 'cuánta', 'cuántas', 'por qué', 'con qué'],
  questionEndings: [],
  requestMarkers: ['por favor', 'puedes', 'podrías', 'puede usted', 'podría', 'vamos a'],
  imperatives: ['responde', 'respóndeme', 'contesta', 'contéstame', 'escribe', 'escríbeme', 'usa', 'utiliza', 'muestra', 'muéstrame', 'dame', 'explica', 'explícame', 'habla', 'háblame', 'añade', 'agrega', 'incluye', 'envía', 'revisa', 'crea', 'instala', 'ejecuta', 'busca', 'encuentra', 'traduce', 'resume', 'haz', 'corrige', 'elimina', 'borra', 'despliega', 'abre', 'recuérdame', 'dime', 'reinicia', 'inicia', 'detén', 'actualiza'],
  heartbeats: ['latido', 'revisión periódica', 'ronda periódica', 'comprobación periódica'],

  proceduralPatterns: [
    'procedimiento',
    'paso a paso|pasos?\\s+[0-9]',
    'cómo (?:se|hacer)|instrucciones',
    'puesta en marcha|montar',
    'instal',
    '\\bcomandos?\\b',
    'flujo de trabajo|workflow',
    'despleg|desplieg|deploy',
    'configur|ajustes',
    'lista de verificación|checklist|runbook|receta',
    '^\\s*[0-9]+[.)]\\s+\\S',
    '\\bprimero\\b.{0,120}\\b(?:luego|después|despues)\\b',
  ],

  always: ['siempre', 'a partir de ahora', 'de ahora en adelante', 'en adelante', 'en el futuro', 'cada vez'],
  never: ['nunca', 'jamás', 'en ningún caso'],
  negations: ['no', 'nunca', 'jamás', 'ningún', 'ninguna', 'ni'],
  addressee: ['me', 'por favor', 'usted', 'tú'],
  firstPerson: ['yo', 'nosotros', 'nosotras', 'mi', 'mis'],
  preferencePatterns: ['\\b(?:yo )?prefiero\\b', '\\bme (?:gusta|gustan|encanta|encantan)\\b', '\\bodio\\b'],

  numberWords: { cero: 0, dos: 2, tres: 3, cuatro: 4, cinco: 5, seis: 6, siete: 7, ocho: 8, nueve: 9, diez: 10, once: 11, doce: 12, quince: 15, veinte: 20, treinta: 30, cuarenta: 40, cincuenta: 50, cien: 100, mil: 1000 },
  months: [
    ['enero'],
    ['febrero'],
    ['marzo'],
    ['abril'],
    ['mayo'],
    ['junio'],
    ['julio'],
    ['agosto'],
    ['septiembre', 'setiembre'],
    ['octubre'],
    ['noviembre'],
    ['diciembre'],
  ],
}
