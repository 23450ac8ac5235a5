/** German (decision 0077; the format is language-table.ts). */
import type { LanguageTable } from './language-table.ts'

export const german: LanguageTable = {
  code: 'de',
  name: 'German',
  words: 'spaced',
  stopWords: ['der', 'die', 'das', 'und', 'ist', 'nicht', 'ich', 'du', 'dir', 'geht', 'wir', 'mit', 'auf', 'für', 'ein', 'eine', 'zu', 'den', 'dem', 'wie', 'mir', 'wird', 'werden', 'oft', 'bitte', 'immer', 'auch', 'noch', 'sind', 'mein', 'meine', 'nie', 'niemals', 'bevorzuge', 'antworte'],

  greetings: ['hallo', 'hi', 'guten morgen', 'guten tag', 'guten abend', 'gute nacht', 'moin', 'servus', 'grüß gott', 'grüezi', 'danke', 'vielen dank', 'danke schön', 'tschüss', 'tschüs', 'auf wiedersehen', 'bis bald', 'bis später'],
  questionWords: ['was', 'wie', 'warum', 'wieso', 'weshalb', 'wann', 'wo', 'woher', 'wohin', 'wer', 'wen', 'wem', 'wessen', 'welche', 'welcher', 'welches', 'welchen', 'ist', 'sind', 'hast', 'hat', 'haben', 'gibt es', 'soll', 'sollte', 'muss', 'wird', 'werden', 'darf'],
  questionEndings: [],
  requestMarkers: ['bitte', 'kannst du', 'könntest du', 'können sie', 'könnten sie', 'würdest du', 'würden sie', 'lass uns', 'lasst uns'],
  imperatives: ['antworte', 'antworten sie', 'schreib', 'schreibe', 'schreiben sie', 'verwende', 'verwenden sie', 'benutze', 'benutzen sie', 'nutze', 'zeig', 'zeige', 'zeigen sie', 'gib', 'geben sie', 'nenne', 'erkläre', 'erklären sie', 'formatiere', 'füge', 'sprich', 'sprechen sie', 'frag', 'frage', 'prüfe', 'prüfen sie', 'nimm', 'sende', 'schicke', 'schick', 'erstelle', 'erstellen sie', 'mach', 'mache', 'installiere', 'starte', 'stoppe', 'lösche', 'suche', 'finde', 'öffne', 'hilf', 'erinnere', 'übersetze', 'fasse', 'liste', 'führe', 'aktualisiere', 'behebe', 'korrigiere', 'speichere', 'merke', 'merk dir'],
  heartbeats: ['herzschlag', 'regelmäßige prüfung', 'periodische prüfung', 'routinekontrolle'],

  proceduralPatterns: [
    'anleitung|prozedur|verfahren',
    'schritt[- ]für[- ]schritt|schritte?\\s+[0-9]',
    '\\bwie man\\b',
    'einricht|aufsetz|set[- ]?up',
    'installier|installation',
    'befehl|kommando',
    'arbeitsablauf|workflow',
    'deploy|bereitstell|ausroll',
    'konfigur|einstellung',
    'checkliste|runbook|rezept',
    '^\\s*[0-9]+[.)]\\s+\\S',
    '\\b(?:zuerst|erst)\\b.{0,120}\\b(?:dann|danach|anschließend)\\b',
  ],

  always: ['immer', 'stets', 'jedes mal', 'ab jetzt', 'von nun an', 'ab sofort', 'künftig', 'in zukunft'],
  never: ['nie', 'niemals', 'nie wieder', 'keinesfalls', 'auf keinen fall'],
  negations: ['nicht', 'kein', 'keine', 'keinen', 'keiner', 'nie', 'niemals'],
  addressee: ['mir', 'mich', 'uns', 'bitte', 'du', 'dir'],
  firstPerson: ['ich', 'wir', 'mein', 'meine', 'unser', 'unsere'],
  preferencePatterns: ['\\bich (?:mag|bevorzuge|liebe|hasse)\\b', '\\bich \\S+ (?:\\S+ )?(?:lieber|am liebsten)\\b', '\\bmir gefällt\\b'],

  numberWords: { null: 0, eins: 1, zwei: 2, drei: 3, vier: 4, fünf: 5, sechs: 6, sieben: 7, acht: 8, neun: 9, zehn: 10, elf: 11, zwölf: 12, zwanzig: 20, dreißig: 30, vierzig: 40, fünfzig: 50, hundert: 100, tausend: 1000 },
  months: [
    ['januar', 'jänner', 'jan'],
    ['februar', 'feb'],
    ['märz', 'mär'],
    ['april', 'apr'],
    ['mai'],
    ['juni', 'jun'],
    ['juli', 'jul'],
    ['august', 'aug'],
    ['september', 'sept', 'sep'],
    ['oktober', 'okt'],
    ['november', 'nov'],
    ['dezember', 'dez'],
  ],
}
