/**
 * The pieces the o200k encoder splits an ASCII text into (its pattern, O200K_PIECES in
 * o200k-table.ts), found by reading the characters instead of running the pattern. Priming counts
 * the tokens of every excerpt line it takes (~45 new lines a turn at 100k units); running the
 * Unicode pattern once per piece, and making a string of each piece to look its count up, were most
 * of that count. ascii-pieces.test.ts holds the two to the same pieces on random ASCII texts.
 *
 * What the pattern's alternatives, tried in order at a position, match in ASCII (letters A–Z, a–z;
 * digits 0–9; whitespace \t \n \v \f \r and space; everything else a sign):
 * 1. an optional sign or whitespace other than a line break, upper-case letters, then lower-case
 *    ones, then an optional contraction ('s 'd 'm 't 'll 've 're, either case);
 * 2. the same with at least one upper-case letter and no lower-case one after them;
 * 3. one to three digits;
 * 4. an optional space, signs, then any line breaks and slashes;
 * 5. a run of whitespace up to its last line break;
 * 6. a run of whitespace not followed by anything else (at the end), or all of it but its last
 *    character when something follows (that character then starts the next piece);
 * 7. one whitespace character.
 */

const isUpper = (code: number): boolean => code >= 65 && code <= 90
const isLower = (code: number): boolean => code >= 97 && code <= 122
const isLetter = (code: number): boolean => isUpper(code) || isLower(code)
const isDigit = (code: number): boolean => code >= 48 && code <= 57
const isSpace = (code: number): boolean => code === 32 || (code >= 9 && code <= 13)
const isLineBreak = (code: number): boolean => code === 10 || code === 13
/** A sign: not whitespace, not a letter, not a digit (control characters too). */
const isSign = (code: number): boolean => !isSpace(code) && !isLetter(code) && !isDigit(code)

/** Whether every character of `text` is ASCII (only then do the pieces below hold). */
export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false
  return true
}

/** Where the contraction starting with the apostrophe at `at` ends, or `at` when there is none. */
function afterContraction(text: string, at: number): number {
  const first = text.charCodeAt(at + 1) | 0x20
  // s, d, m, t
  if (first === 115 || first === 100 || first === 109 || first === 116) return at + 2
  const second = text.charCodeAt(at + 2) | 0x20
  // ll, ve, re
  if ((first === 108 && second === 108) || (first === 118 && second === 101) || (first === 114 && second === 101)) return at + 3
  return at
}

/** Where the piece starting at `start` ends (exclusive), for an ASCII `text`. */
export function asciiPieceEnd(text: string, start: number): number {
  const n = text.length
  const code = text.charCodeAt(start)
  // 1 and 2: letters, after one sign or whitespace other than a line break.
  const letters = isLetter(code) ? start : !isDigit(code) && !isLineBreak(code) && start + 1 < n && isLetter(text.charCodeAt(start + 1)) ? start + 1 : -1
  if (letters >= 0) {
    let end = letters
    while (end < n && isUpper(text.charCodeAt(end))) end++
    while (end < n && isLower(text.charCodeAt(end))) end++
    return end + 1 < n && text.charCodeAt(end) === 39 ? afterContraction(text, end) : end
  }
  // 3: up to three digits.
  if (isDigit(code)) {
    let end = start + 1
    while (end < n && end < start + 3 && isDigit(text.charCodeAt(end))) end++
    return end
  }
  // 4: signs, after an optional space, then line breaks and slashes.
  const signs = isSign(code) ? start : code === 32 && start + 1 < n && isSign(text.charCodeAt(start + 1)) ? start + 1 : -1
  if (signs >= 0) {
    let end = signs
    while (end < n && isSign(text.charCodeAt(end))) end++
    while (end < n && (isLineBreak(text.charCodeAt(end)) || text.charCodeAt(end) === 47)) end++
    return end
  }
  // 5–7: whitespace.
  let end = start
  let lastBreak = -1
  while (end < n && isSpace(text.charCodeAt(end))) {
    if (isLineBreak(text.charCodeAt(end))) lastBreak = end
    end++
  }
  if (lastBreak >= 0) return lastBreak + 1
  if (end === n || end - start === 1) return end
  return end - 1
}
