/**
 * The offline rules measured on two samples of 100 user turns of LoCoMo and BEAM dev labelled by
 * hand (decisions 0066, 0070): the first (seed 29) and a held-out second (seed 2911, labelled before
 * the rules of decision 0070 were written, and never read to write them). Precision: every fact the
 * rules extract matches a label of its turn, or a fact accepted after the fact as stated in the turn
 * (`accepted`: counted as not invented, never for recall), except the misreadings listed here;
 * recall: share of the labels matched (regression guards at the figures reached). The turn texts are
 * read from ../shared/bench (never copied into the repository); without them the test skips with a
 * notice. Also: across the whole of both dev sets, nothing is extracted from an assistant's turn.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { seededRandom } from '../../test-support/seeded-random.ts'
import { extractFacts } from './extract.ts'
import { ruleFacts } from './rules.ts'

interface Label {
  text: string
  type?: string
  match: string[]
}
interface LabelledTurn {
  source: 'locomo10' | 'beam500k-dev'
  conversation: string
  turn: string
  facts: Label[]
  accepted?: Label[]
}
interface EvalTurn {
  id: string
  text: string
  role?: 'user' | 'assistant'
}
interface EvalSet {
  conversations: Array<{ id: string; sessions: Array<{ started_at?: string | null; turns: EvalTurn[] }> }>
}
interface Drawn {
  conversation: string
  turn: EvalTurn
  at: Date | undefined
}

// ../shared/bench beside the checkout (a worktree sits one folder deeper); ENGRAM_BENCH_DIR overrides.
const root = resolve(import.meta.dirname, '../../..')
const bench = process.env.ENGRAM_BENCH_DIR ?? [join(root, '../shared/bench'), join(root, '../../shared/bench')].find((dir) => existsSync(dir)) ?? join(root, '../shared/bench')
const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8')) as { turns: LabelledTurn[] }
const SOURCES = ['locomo10', 'beam500k-dev'] as const
const available = SOURCES.every((name) => existsSync(join(bench, `${name}.eval.json`)))
const skip = available ? false : `the dev sets are not in ${bench}`
if (!available) console.log(`NOTICE: labelled-turns skipped: ${skip}`)

function load(name: string): EvalSet {
  return JSON.parse(readFileSync(join(bench, `${name}.eval.json`), 'utf8')) as EvalSet
}

function userTurns(set: EvalSet): Drawn[] {
  return set.conversations.flatMap((conversation) =>
    conversation.sessions.flatMap((session) =>
      session.turns.filter((turn) => (turn.role ?? 'user') === 'user').map((turn) => ({ conversation: conversation.id, turn, at: session.started_at ? new Date(`${session.started_at}Z`) : undefined })),
    ),
  )
}

/** 50 user turns of a set, mulberry32 seeded `seed`, uniform without replacement in file order, none of `drawnBefore` ("conversation/turn"). */
function draw(set: EvalSet, seed: number, drawnBefore: ReadonlySet<string> = new Set()): Drawn[] {
  const turns = userTurns(set)
  const random = seededRandom(seed)
  const picked = new Set<number>()
  while (picked.size < 50) {
    const index = Math.floor(random() * turns.length)
    const turn = turns[index] as Drawn
    if (!drawnBefore.has(`${turn.conversation}/${turn.turn.id}`)) picked.add(index)
  }
  return [...picked].sort((a, b) => a - b).map((index) => turns[index] as Drawn)
}

const matches = (text: string, label: Label): boolean => label.match.every((word) => text.toLowerCase().includes(word.toLowerCase()))

/** Measures the rules on one labelled sample; returns the figures, printing them per type. */
function measure(name: string, sample: LabelledTurn[], drawn: Array<Drawn & { source: string }>) {
  let extracted = 0
  let labelled = 0
  const found = new Map<string, { labels: number; matched: number }>()
  const unexplained: string[] = []
  for (const [index, item] of drawn.entries()) {
    const turn = sample[index] as LabelledTurn
    const hit = new Set<number>()
    for (const fact of ruleFacts(item.turn.text, item.at)) {
      extracted += 1
      const label = turn.facts.findIndex((candidate) => matches(fact.text, candidate))
      if (label >= 0) {
        labelled += 1
        hit.add(label)
      } else if (!(turn.accepted ?? []).some((accepted) => matches(fact.text, accepted))) unexplained.push(`${item.source}/${item.turn.id}: ${fact.kind}: ${fact.text}`)
    }
    for (const [i, label] of turn.facts.entries()) {
      const tally = found.get(label.type ?? '') ?? { labels: 0, matched: 0 }
      tally.labels += 1
      if (hit.has(i)) tally.matched += 1
      found.set(label.type ?? '', tally)
    }
  }
  const labels = [...found.values()].reduce((sum, tally) => sum + tally.labels, 0)
  const matched = [...found.values()].reduce((sum, tally) => sum + tally.matched, 0)
  const precision = extracted === 0 ? 1 : (extracted - unexplained.length) / extracted
  console.log(`${name}: 100 turns, ${labels} labels; extracted ${extracted}: ${labelled} match a label, ${extracted - labelled - unexplained.length} accepted after the fact, ${unexplained.length} wrong`)
  console.log(`  precision ${precision.toFixed(3)} (labels alone: ${(extracted === 0 ? 1 : labelled / extracted).toFixed(3)})  recall ${(matched / labels).toFixed(3)} (${matched}/${labels})`)
  for (const [type, tally] of found) console.log(`  recall on ${type}: ${tally.matched}/${tally.labels}`)
  return { precision, matched, labels, unexplained }
}

test('the offline rules on the first labelled sample (seed 29): precision ≥ 0.95, nothing unexplained, recall at least 25/62', { skip }, () => {
  const sample = fixture('labelled-turns.json').turns
  const drawn = SOURCES.flatMap((name) => draw(load(name), 29).map((item) => ({ source: name, ...item })))
  assert.deepEqual(
    drawn.map((item) => `${item.source}/${item.conversation}/${item.turn.id}`),
    sample.map((item) => `${item.source}/${item.conversation}/${item.turn}`),
    'the fixture holds the seeded draw',
  )
  const { precision, matched, labels, unexplained } = measure('first sample (seed 29)', sample, drawn)
  assert.deepEqual(unexplained, [], 'every fact the rules extract is one a reader labelled or accepted')
  assert.ok(precision >= 0.95)
  // Measured 2026-11-29 (decision 0070): 25 of 62 (before: 7); a regression guard.
  assert.ok(matched >= 25, `recall must not fall below 25/62 (now ${matched}/${labels})`)
})

test('the offline rules on the held-out sample (seed 2911): precision ≥ 0.95, the one known misreading, recall at least 26/78', { skip }, () => {
  const first = new Set(fixture('labelled-turns.json').turns.map((item) => `${item.conversation}/${item.turn}`))
  const sample = fixture('labelled-turns-2911.json').turns
  const drawn = SOURCES.flatMap((name) => draw(load(name), 2911, first).map((item) => ({ source: name, ...item })))
  assert.deepEqual(
    drawn.map((item) => `${item.source}/${item.conversation}/${item.turn.id}`),
    sample.map((item) => `${item.source}/${item.conversation}/${item.turn}`),
    'the fixture holds the seeded draw, none of the first sample\'s turns',
  )
  const { precision, matched, labels, unexplained } = measure('held-out sample (seed 2911)', sample, drawn)
  // The rules read "In this example, I'm creating a new security group …" (the user describing the
  // code they ask about) as a fact of their world: a misreading, kept visible here.
  assert.deepEqual(unexplained, ['beam500k-dev/M650: lesson: The user is creating a new security group and authorizing inbound traffic from the specified IP range.'])
  assert.ok(precision >= 0.95, `precision ${precision}`)
  // Measured 2026-11-29 (decision 0070): 26 of 78 (before: 3); a regression guard.
  assert.ok(matched >= 26, `recall must not fall below 26/78 (now ${matched}/${labels})`)
})

test('across the whole of LoCoMo and BEAM dev, nothing is extracted from an assistant turn; the user turns yield facts', { skip }, async () => {
  let userFacts = 0
  let assistantTurns = 0
  for (const name of SOURCES) {
    for (const conversation of load(name).conversations) {
      const turns = conversation.sessions.flatMap((session) => session.turns)
      const assistant = turns.filter((turn) => turn.role === 'assistant')
      assistantTurns += assistant.length
      const fromAssistant = await extractFacts(assistant.map((turn) => ({ role: 'assistant', content: turn.text })))
      assert.deepEqual(fromAssistant.engrams, [], `${name}/${conversation.id}: nothing from the assistant's turns`)
      // With both roles, exactly the user turns' facts come out.
      const both = await extractFacts(turns.map((turn) => ({ role: turn.role ?? 'user', content: turn.text })))
      const users = new Set(turns.filter((turn) => (turn.role ?? 'user') === 'user').flatMap((turn) => ruleFacts(turn.text).map((fact) => fact.text)))
      assert.ok(both.engrams.every((engram) => users.has(engram.text) && engram.meta.method === 'rules'))
      userFacts += both.engrams.length
    }
  }
  console.log(`whole dev sets: ${assistantTurns} assistant turns, 0 facts from them; ${userFacts} facts from user turns`)
  assert.ok(assistantTurns > 6000)
})

test('the rules skip questions, negations, hypotheticals, quotes, reported speech and other clauses; they rewrite faithfully', () => {
  const none = [
    'Am I allergic to peanuts?',
    'I prefer tea, right?',
    'Do I prefer tea, or should I switch?',
    "I'm not allergic to peanuts.",
    "If I were rich, I'd live in Paris.",
    'She said I love opera.',
    'My friend told me "I live in Rome".',
    'I love that!',
    "Don't give up, buddy!",
    "I'm a bit tired today.",
    'I would love to work at Google.',
    'Maybe I prefer tea.',
    'I love the color and texture.',
    'Aw, I love holding them!',
    "I'm a fan too!",
    'I love to.',
    'As a result, I moved.',
    'As a kid, I loved trains.',
    'I think I live in Paris.',
    'I might quit, but I am a nurse.',
    "I'm OK.",
    'I like that game.',
    'I love their design and engineering.',
    'My son really is 13.',
    'That one is my favorite.',
    'I prefer problems that combine algebra, geometry, and calculus for a deeper understanding of each.',
  ]
  for (const text of none) assert.deepEqual(ruleFacts(text), [], text)
  assert.deepEqual(ruleFacts("Thanks! I'm allergic to peanuts."), [{ kind: 'profile', text: 'The user is allergic to peanuts.' }])
  // A value a person has one of at a time is the profile's keyed fact: a later one replaces it.
  assert.deepEqual(ruleFacts('I live in Lisbon and I work as a nurse.'), [
    { kind: 'profile', text: 'Location: Lisbon' },
    { kind: 'profile', text: 'Role: nurse' },
  ])
  assert.deepEqual(ruleFacts('My name is Jorge.'), [{ kind: 'profile', text: 'Name: Jorge' }])
  assert.deepEqual(ruleFacts("I'm based in Porto. I work at Acme. My time zone is CET."), [
    { kind: 'profile', text: 'Location: Porto' },
    { kind: 'profile', text: 'Works at: Acme' },
    { kind: 'profile', text: 'Timezone: CET' },
  ])
  assert.deepEqual(ruleFacts("I'm from Porto. I work for a charity."), [
    { kind: 'profile', text: 'The user is from Porto.' },
    { kind: 'profile', text: 'The user works for a charity.' },
  ])
  assert.deepEqual(ruleFacts('From now on, answer in French.'), [{ kind: 'always', text: 'Answer in French.' }])
  assert.deepEqual(ruleFacts('Never use emojis in replies.'), [{ kind: 'never', text: 'Use emojis in replies.' }])
  assert.deepEqual(ruleFacts('When I ask for code, use TypeScript.'), [{ kind: 'when', text: 'When the user asks for code, use TypeScript.' }])
  assert.deepEqual(ruleFacts('I love hiking with my dog.'), [{ kind: 'profile', text: 'The user loves hiking with their dog.' }])
  assert.deepEqual(ruleFacts('I prefer OAuth 2.0 PKCE for public clients.'), [{ kind: 'profile', text: 'The user prefers OAuth 2.0 PKCE for public clients.' }])
  assert.deepEqual(ruleFacts("I love action movies, the effects are so cool."), [{ kind: 'profile', text: 'The user loves action movies.' }])
  assert.deepEqual(ruleFacts('I enjoy reading, watching movies, and exploring nature.'), [{ kind: 'profile', text: 'The user enjoys reading, watching movies, and exploring nature.' }])
  // Who the user is, where they live, who their family are, what they like: first-person statements.
  const oneFact: Array<[said: string, fact: string]> = [
    ["As a paramedic, I'm excited to build this app, can you help?", 'The user is a paramedic.'],
    ["I'm a nurse, but I might quit.", 'The user is a nurse.'],
    ['I have two dogs named Max and Bella.', 'The user has two dogs named Max and Bella.'],
    ['I have a peanut allergy.', 'The user has a peanut allergy.'],
    ['My son Ronald is 13.', "The user's son Ronald is 13."],
    ['Wanted to share some news - my partner is pregnant!', "The user's partner is pregnant."],
    ['I live with my sister.', 'The user lives with their sister.'],
    ["I'm passionate about dancing and it brings me so much joy.", 'The user is passionate about dancing.'],
    ["I've always loved caring for my pups.", 'The user has always loved caring for their pups.'],
    ['I like games that test my strategizing.', 'The user likes games that test their strategizing.'],
    ["I also enjoy aerial yoga, it's a great way to switch off.", 'The user enjoys aerial yoga.'],
    ["I've been into dancing since I was a kid.", 'The user has been into dancing.'],
    ['The Hobbit is one of my favorites too!', "The Hobbit is one of the user's favorites."],
    ["I'm hooked on this great game called FIFA 23.", 'The user is hooked on this great game called FIFA 23.'],
    ['I prefer visual examples, so can you show me one?', 'The user prefers visual examples.'],
    ['Can you help me with this, I prefer step-by-step explanations, and can you add examples?', 'The user prefers step-by-step explanations.'],
    ["I started playing acoustic guitar about five years ago; it's been great.", 'The user started playing acoustic guitar about five years ago.'],
  ]
  for (const [said, fact] of oneFact) assert.deepEqual(ruleFacts(said), [{ kind: 'profile', text: fact }], said)
  assert.deepEqual(ruleFacts("I'm Meghan Fowler, and I'm 25, so I'm hoping to find a laptop."), [
    { kind: 'profile', text: 'The user is Meghan Fowler.' },
    { kind: 'profile', text: 'Age: 25' },
  ])
  assert.deepEqual(ruleFacts('Je suis allergique aux arachides.'), [], 'English only')
})

test('a one-value fact is the value alone: when it became true is not part of it', () => {
  const texts = (content: string) => ruleFacts(content).map((fact) => fact.text)
  assert.deepEqual(texts('I moved to Porto last month.'), ['Location: Porto'])
  assert.deepEqual(texts('I live in Porto now.'), ['Location: Porto'])
  assert.deepEqual(texts('I moved to Porto two years ago.'), ['Location: Porto'])
  assert.deepEqual(texts('I work at Acme Labs since March.'), ['Works at: Acme Labs'])
  assert.deepEqual(texts('I live in New York City.'), ['Location: New York City'])
  assert.deepEqual(texts('I live in Maytown.'), ['Location: Maytown'], 'a place whose name begins like a month is kept whole')
})
