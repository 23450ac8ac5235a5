/** French (decision 0077; the format is language-table.ts). */
import type { LanguageTable } from './language-table.ts'

export const french: LanguageTable = {
  code: 'fr',
  name: 'French',
  words: 'spaced',
  stopWords: ['le', 'la', 'les', 'et', 'est', 'je', 'tu', 'vous', 'nous', 'une', 'des', 'du', 'pour', 'avec', 'pas', 'ne', 'que', 'qui', 'dans', 'sur', 'mon', 'ce', 'sont', 'toujours', 'moi', 'au', 'aux', 'quelle', 'comment', 'de', 'la', 'jamais', 'préfère', 'réponds'],

  greetings: ['bonjour', 'bonsoir', 'salut', 'coucou', 'merci', 'merci beaucoup', 'au revoir', 'bonne nuit', 'à bientôt', 'à plus', 'allô'],
  questionWords: ["qu'est-ce", 'que', 'quoi', 'comment', 'pourquoi', 'quand', 'où', 'qui', 'quel', 'quelle', 'quels', 'quelles', 'combien', 'est-ce que', 'est-ce'],
  questionEndings: [],
  requestMarkers: ["s'il te plaît", "s'il vous plaît", 'stp', 'svp', 'pouvez-vous', 'peux-tu', 'pourriez-vous', 'pourrais-tu', 'merci de'],
  imperatives: ['réponds', 'répondez', 'écris', 'écrivez', 'utilise', 'utilisez', 'montre', 'montrez', 'donne', 'donnez', 'explique', 'expliquez', 'parle', 'parlez', 'ajoute', 'ajoutez', 'indique', 'indiquez', 'envoie', 'envoyez', 'vérifie', 'vérifiez', 'crée', 'créez', 'installe', 'installez', 'lance', 'lancez', 'cherche', 'cherchez', 'trouve', 'trouvez', 'traduis', 'traduisez', 'résume', 'résumez', 'liste', 'mets', 'mettez', 'fais', 'faites', 'corrige', 'corrigez', 'supprime', 'supprimez', 'déploie', 'ouvre', 'rappelle', 'rappelez', 'retiens', 'redémarre', 'redémarrez', 'démarre', 'démarrez', 'arrête', 'arrêtez'],
  heartbeats: ['vérification périodique', 'contrôle périodique', 'ronde périodique'],

  proceduralPatterns: [
    'procédure',
    'étapes?\\b|pas à pas',
    'comment (?:faire|on)|marche à suivre|mode d.emploi',
    'mettre en place|mise en place',
    'install',
    '\\bcommandes?\\b',
    'flux de travail|workflow',
    'déploi|deploy',
    'configur|paramétr',
    'liste de contrôle|checklist|runbook|recette',
    '^\\s*[0-9]+[.)]\\s+\\S',
    "d'abord.{0,120}\\b(?:ensuite|puis)\\b",
  ],

  always: ['toujours', 'désormais', 'dorénavant', 'à partir de maintenant', "à l'avenir", 'systématiquement', 'chaque fois'],
  never: ['jamais', 'en aucun cas'],
  negations: ['ne', "n'", 'pas', 'jamais', 'aucun', 'aucune'],
  addressee: ['moi', 'me', "m'", "s'il te plaît", "s'il vous plaît", 'stp', 'svp'],
  firstPerson: ['je', "j'", 'nous', 'mon', 'ma', 'mes'],
  preferencePatterns: ['\\bje (?:préfère|aime|adore|déteste)\\b', "\\bj'(?:aime|adore)\\b"],

  numberWords: { zéro: 0, deux: 2, trois: 3, quatre: 4, cinq: 5, six: 6, sept: 7, huit: 8, neuf: 9, dix: 10, onze: 11, douze: 12, quinze: 15, vingt: 20, trente: 30, quarante: 40, cinquante: 50, cent: 100, mille: 1000 },
  months: [
    ['janvier', 'janv'],
    ['février', 'fevrier', 'févr'],
    ['mars'],
    ['avril', 'avr'],
    ['mai'],
    ['juin'],
    ['juillet', 'juil'],
    ['août', 'aout'],
    ['septembre', 'sept'],
    ['octobre', 'oct'],
    ['novembre', 'nov'],
    ['décembre', 'decembre', 'déc'],
  ],
}
