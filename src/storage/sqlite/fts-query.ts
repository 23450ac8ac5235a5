/**
 * Turning a user's words into FTS5 query syntax that can never be a syntax error.
 *
 * FTS5 gives meaning to `"`, `*`, `^`, `:`, `(`, `)`, `-`, `+` and the words AND, OR, NOT, NEAR;
 * text typed by a person or an LLM hits them all the time ("what's (roughly) the -v flag?"). Every
 * whitespace-separated token becomes a quoted string (a phrase to FTS5, so `foo-bar` still matches
 * "foo bar"), quotes inside are doubled, and the tokens are ORed so that BM25 ranks documents by
 * how many of the words they share. Tokens with no letter or digit are dropped: the tokenizer
 * would index nothing for them anyway.
 */

/*
 * A long pasted paragraph would otherwise become a query with hundreds of OR branches; 64 distinct
 * words keep every meaningful part of a question while bounding the cost of one search.
 */
export const MAX_QUERY_TERMS = 64

const HAS_WORD_CHARACTER = /[\p{L}\p{N}]/u

/** The FTS5 MATCH expression for `text`, or null when it has no searchable word. */
export function toFtsQuery(text: string, maxTerms = MAX_QUERY_TERMS): string | null {
  const terms: string[] = []
  const seen = new Set<string>()
  // Control characters end an FTS5 string early (NUL gives "unterminated string"): they separate words.
  for (const token of text.normalize('NFKC').replace(/\p{Cc}/gu, ' ').split(/\s+/u)) {
    if (!HAS_WORD_CHARACTER.test(token)) continue
    const key = token.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    terms.push(`"${token.replaceAll('"', '""')}"`)
    if (terms.length >= maxTerms) break
  }
  return terms.length > 0 ? terms.join(' OR ') : null
}
