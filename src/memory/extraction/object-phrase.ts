/**
 * The object of a first-person statement, as the user said it (decisions 0066, 0070): the words
 * after "I love", "I use", "I went to", cut where another clause begins, and refused when they point
 * into the conversation rather than at a thing in the world ("I love that", "I made it"). Shared by
 * the statement rules (rules.ts) and the rules for reported events and the user's world (world-rules.ts).
 */

// Objects that point at something said in the conversation rather than at a thing in the world.
const DEICTIC = /^(?:it|that|this|these|those|them|you|your|yours|what|how|when|where|why|which|who|the way|the idea|the (?:sound|look|photo|picture|pic) of|hearing|seeing|reading about|talking|chatting)\b/i

// A pronoun or demonstrative inside the object points into the conversation ("I love the color of
// it", "I like holding them", "I love this city", "I love their design"): who or what it is, the
// sentence does not say.
// "This" before a thing it then names introduces it ("this great game called FIFA 23"): not deixis.
const NAMED_HERE = /\b(?:this|these) (?:[a-z-]+ ){0,3}(?:called|named) (?=[A-Z0-9])/g
const POINTING = /\b(?:this|that|these|those|it|its|them|their|theirs|him|her|his|hers|there|here)\b|\bit['’]s\b/i
// A list keeps its commas ("reading, movies, and nature"); any other comma starts another clause
// ("aerial yoga, it's a great way to switch off and …"): a list's items are a few words each.
const LIST = /^[^,]+(?:, [^,]+)*,? (?:and|or) [^,]+$/
const isList = (value: string): boolean => LIST.test(value) && value.split(/,\s*(?:and |or )?|\s+(?:and|or)\s+/).every((item) => item.split(' ').length <= 4)
const LIST_GOES_ON = /^\s*(?:[^,\s]+(?: [^,\s]+){0,5},\s*)+(?:and|or)\s/i
// After a plural noun, "that" opens a relative clause ("games that test my strategizing"), it
// points at nothing.
const RELATIVE_THAT = /(?<=\b[a-z]{3,}s) that (?=[a-z]+ )/g

/** An object phrase as the user said it, or undefined when it is not one fact (too long, deictic, another clause). */
export function objectPhrase(raw: string, maxWords = 10): string | undefined {
  let value = raw
    .replace(/\s+/g, ' ')
    .replace(/\s+[-–—]\s+.*$/, '')
    // A conjunction before another subject starts another clause ("dancing and it brings me joy").
    .replace(/\s+(?:and|but|so|because|since|as|['’]?cause)\s+(?:it|it['’]s|they|they['’]re|he|she|we|you|that|this|there)\b.*$/i, '')
    // A time or reason clause after the object is not part of it ("dancing since I was a kid").
    .replace(/\s+(?:since|because|['’]?cause|when|whenever|while|until|after|before|as)\s+(?:I|I['’][a-z]+|it|it['’]s|they|he|she|we|you|there)\b.*$/, '')
    .replace(/[.!?,;:\s]+$/, '')
    .trim()
  // A name at the end is whom the user speaks to ("I love hiking, Nate").
  value = value.replace(/,\s*[A-Z][a-z]+$/, '')
  if (value.includes(',') && !isList(value)) {
    // Cut at the comma only when another clause follows it, never inside a list whose items are
    // long ("problems that combine algebra, geometry, and calculus"): the head would misread it.
    if (LIST_GOES_ON.test(value.slice(value.indexOf(',') + 1))) return undefined
    value = value.slice(0, value.indexOf(','))
  }
  // "…too", "…as well": the user agrees with what was said; the fact is theirs all the same.
  value = value.replace(/\s+(?:too|as well|so much|a lot)$/i, '').trim()
  const named = value.replace(NAMED_HERE, '')
  if (value === '' || DEICTIC.test(named) || POINTING.test(named.replace(RELATIVE_THAT, ' which '))) return undefined
  // An infinitive without its verb, or a fan of nothing named ("I'm a fan too").
  if (/(?:^|\s)to$/i.test(value) || /^an? (?:big |huge |total |great )?fan$/i.test(value)) return undefined
  // Another subject inside the object is another clause ("I love how you …", "I like it when she …").
  if (/\b(?:I|you|your|yours|he|she|we|they)\b/.test(value) || /\bI['’]/.test(value)) return undefined
  if (value.split(' ').length > maxWords) return undefined
  return value
    .replace(/\b(?:my|our)\b/gi, 'their')
    .replace(/\b(?:me|us)\b/gi, 'them')
    .replace(/\bmyself\b/gi, 'themselves')
}

export const sentence = (text: string): string => {
  const trimmed = text.trim().replace(/[.!]+$/, '')
  return `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}.`
}

