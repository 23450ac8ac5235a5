/**
 * Threads: what was said about one subject, in time order with dates, pointing back to its turns
 * (decision 0080; AnimaWorks' knowledge files and Anton's topic files are the seeds' form). Gathered
 * offline at a session's boundary, without a model, into `threads/<subject>.md` of the session's
 * owner's tree, through the document store's one write path.
 *
 * A subject comes from a principle, not a list: a word (its stem) the session's user turns share
 * with the user turns of an earlier session, carrying at least one bit of information over all of
 * them — said in at most half of the turns, so it picks some out (a conversation's background, the
 * word in nearly every turn, picks out nothing). Of those, a boundary starts threads for the ones
 * that carry the most information over the whole conversation, df · log2(N / df) bits: a word said
 * once is rare but tells of nothing that recurs, a word said everywhere recurs but tells nothing;
 * the subjects of a conversation lie between. A subject is a thing: a noun (WordNet's nouns, when
 * the word list is installed; every word otherwise) or a name (a word written capitalised inside a
 * sentence: `Flask`, `JWT`), starting with a letter (`120ms`, `768px` are quantities).
 *
 * A turn is about the subject it says most, weighted by its information (`TURN_SUBJECTS`; a noun
 * in passing is not what it is about); a thread gathers every turn about its subject, and a thread
 * started late gathers the earlier ones it is now what they say most about. Each line is the turn's day, its speaker, the
 * sentences of it that say the subject (what was said about it, not the whole turn) and its pointer
 * (`<!-- msg:123 -->`, as Anton's topic files mark a line's topic and time). A thread grows by
 * appending: its history is the turns themselves, so no version is kept. Gathering twice writes
 * nothing new.
 *
 * Only what the user (the sessions' `user`-role speakers) said is gathered: a question about the
 * whole story is about what they brought up; the agent's replies are reached from the turns.
 */
import type { Clock } from '../../core/clock.ts'
import type { StoredMessage } from '../../core/message.ts'
import type { ContextStore, DocumentStore } from '../../storage/contracts.ts'
import { stem, STOP_WORDS, words } from '../../text/analyse.ts'
import { installedHypernymMap, nounLemma } from '../../text/wordnet.ts'

/** Threads a boundary may start (the session's most informative new subjects); existing threads always grow. */
const NEW_SUBJECTS = 2
/**
 * The subjects a turn is about: the one it says most, by its information. Three (the first form) put
 * each BEAM turn in ~4 threads and cost ~3.3 document writes a boundary; one holds both dev sets and
 * writes ~1.2 (decision 0080, amended).
 */
const TURN_SUBJECTS = 1
/** A subject's least information over the user's turns, in bits: said in at most half of them. */
const MIN_BITS = 1
/** A word shorter than this is not a subject (units, abbreviations of a letter or two). */
const MIN_SUBJECT_CHARS = 3
/** The longest line a thread keeps of one turn (the turn itself is a pointer away). */
const LINE_CHARS = 400

export interface GatherThreadsDeps {
  context: Pick<ContextStore, 'findConversation' | 'listConversations' | 'messages' | 'messagesById'>
  /** The session owner's documents (the user's tree, the agent's without a user). */
  documents: Pick<DocumentStore, 'slugs' | 'read' | 'write' | 'append'>
  agent: string
  clock: Clock
}

export interface GatherReport {
  session: string
  /** Threads written (new or grown), by subject. */
  written: string[]
  /** Threads started at this boundary. */
  started: string[]
}

/** Words written capitalised after a lowercase word or a comma: names, not the start of a sentence. */
const NAME = /(?<=[\p{Ll},;:] +)(\p{Lu}[\p{L}\p{N}]*)/gu

/** Whether `word` (lowercase) is a noun; every word is when WordNet's nouns are not installed. */
function isNoun(word: string): boolean {
  const nouns = installedHypernymMap()
  return nouns === null || nounLemma(word, (lemma) => nouns.has(lemma)) !== undefined
}

/** Owners whose parsed turns a process keeps, the least recently gathered dropped first (and read again when next gathered). */
const OWNERS_KEPT = 16

/**
 * A user turn as gathering reads it: where it is, and the things it says (nouns and names, by
 * stem). Its text is not kept: the few turns a boundary writes lines for are read again by id.
 */
interface Turn {
  id: number
  at: string
  session: string
  /** The assistant message that answered it (the next message of its conversation, when the agent's). */
  reply?: number
  /** How many times it says each thing (by stem). */
  counts: Map<string, number>
}

/**
 * The parsed user turns of one owner, with the statistics gathering reads over them, kept up to
 * date as turns are read: stored messages are never rewritten, so a boundary reads only its own
 * session's new messages (and those of conversations this process has not read yet).
 */
interface OwnerTurns {
  /** The last message seq read of each conversation. */
  lastSeq: Map<number, number>
  /** Each conversation's last turn while the message after it is not read yet (its reply, when the agent's). */
  awaiting: Map<number, Turn>
  /** Oldest first. */
  turns: Turn[]
  /** Turns saying each stem. */
  df: Map<string, number>
  /** The turns saying each stem (the ones a thread of it may gather), in the order read. */
  saying: Map<string, Turn[]>
  /** Sessions saying each stem. */
  sessionsOf: Map<string, Set<string>>
  /** The surface forms of each stem, by the turns that say them so. */
  surface: Map<string, Map<string, number>>
  /**
   * The owner's threads, by the stem of their subject: the slug and the turns its lines point at. Read
   * from the documents at the owner's first gathering in this process, then kept as this process
   * writes them, so a boundary neither lists nor reads the threads it adds to.
   */
  threads?: Map<string, Held>
}

/** A thread as gathering knows it: its document's slug and the turns it holds a line for. */
interface Held {
  slug: string
  turns: Set<number>
}

/** Per context store, the owners' turns (by user; '' for the agent's own sessions), in the order last gathered. */
const turnsRead = new WeakMap<object, Map<string, OwnerTurns>>()

/** The owner's turns, kept or undefined, refreshed as the most recently gathered (at most OWNERS_KEPT are kept). */
function ownerTurns(context: object, owner: string, fresh: () => OwnerTurns): { kept: boolean; turns: OwnerTurns } {
  const owners = turnsRead.get(context) ?? new Map<string, OwnerTurns>()
  turnsRead.set(context, owners)
  const kept = owners.get(owner)
  const turns = kept ?? fresh()
  owners.delete(owner)
  owners.set(owner, turns)
  for (const oldest of owners.keys()) {
    if (owners.size <= OWNERS_KEPT) break
    owners.delete(oldest)
  }
  return { kept: kept !== undefined, turns }
}

/** The owner's threads as their documents say: each subject's slug and the turns its lines point at. */
async function readHeld(documents: GatherThreadsDeps['documents']): Promise<Map<string, Held>> {
  const threads = new Map<string, Held>()
  for (const slug of await documents.slugs('thread')) {
    const doc = await documents.read('thread', slug)
    threads.set(stem(slug), { slug, turns: new Set(doc === null ? [] : threadMessageIds(doc.body).map(Number)) })
  }
  return threads
}

/** Reads one user message into `owner`'s turns and statistics. */
function addTurn(owner: OwnerTurns, message: StoredMessage, session: string): Turn {
  const names = new Set([...message.content.matchAll(NAME)].map((match) => (match[1] as string).toLowerCase()))
  const forms = new Map<string, string>()
  const counts = new Map<string, number>()
  for (const word of words(message.content)) {
    if (STOP_WORDS.has(word) || word.length < MIN_SUBJECT_CHARS || !/^\p{L}/u.test(word)) continue
    if (!names.has(word) && !isNoun(word)) continue
    const s = stem(word)
    forms.set(s, word)
    counts.set(s, (counts.get(s) ?? 0) + 1)
  }
  const turn: Turn = { id: message.id, at: message.at, session, counts }
  owner.turns.push(turn)
  for (const [s, word] of forms) {
    owner.df.set(s, (owner.df.get(s) ?? 0) + 1)
    const saying = owner.saying.get(s) ?? []
    saying.push(turn)
    owner.saying.set(s, saying)
    const sessions = owner.sessionsOf.get(s) ?? new Set<string>()
    sessions.add(session)
    owner.sessionsOf.set(s, sessions)
    const surface = owner.surface.get(s) ?? new Map<string, number>()
    surface.set(word, (surface.get(word) ?? 0) + 1)
    owner.surface.set(s, surface)
  }
  return turn
}

/** Oldest first: by instant (ISO strings of one form compare as text), then in the order stored. */
function inTime(a: Turn, b: Turn): number {
  return a.at < b.at ? -1 : a.at > b.at ? 1 : a.id - b.id
}

/** A thread's document slug for a subject word. */
function slugOf(word: string): string {
  return word.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '').slice(0, 60)
}

/** One dated line of a thread: its day, its speaker when named, the sentences that say the subject (stem `subject`), on one line, and its pointer. */
export function threadLine(message: Pick<StoredMessage, 'id' | 'at' | 'name' | 'content'>, subject: string, reply?: number): string {
  const sentences = message.content.split(/(?<=[.!?])\s+|\n+/).map((sentence) => sentence.replace(/\s+/g, ' ').trim())
  const about = sentences.filter((sentence) => words(sentence).some((word) => stem(word) === subject))
  let said = (about.length > 0 ? about : sentences).filter((sentence) => sentence !== '').join(' … ')
  if (said.length > LINE_CHARS) said = `${said.slice(0, LINE_CHARS - 1).trimEnd()}…`
  return `- ${message.at.slice(0, 10)}${message.name ? ` ${message.name}:` : ':'} ${said} <!-- msg:${message.id}${reply === undefined ? '' : ` reply:${reply}`} -->`
}

/**
 * A line's pointer to its turn, as Anton's topic files mark a line's topic and time, and to the reply
 * that answered it when there was one: `<!-- msg:123 reply:124 -->`.
 */
const POINTER = /<!-- msg:(\d+)(?: reply:(\d+))? -->/g

/** The message ids a thread's body points back to, in its lines' order (time order). */
export function threadMessageIds(body: string): string[] {
  return [...body.matchAll(POINTER)].map((match) => match[1] as string)
}

/** Each line's turn and the reply that answered it (when the line has one), in its lines' order. */
export function threadTurnsAndReplies(body: string): string[] {
  return [...body.matchAll(POINTER)].flatMap((match) => (match[2] === undefined ? [match[1] as string] : [match[1] as string, match[2]]))
}

/** A thread's body as it is read and searched: its lines without their pointers. */
export function threadText(body: string): string {
  return body.replace(/ ?<!-- msg:\d+(?: reply:\d+)? -->/g, '')
}

/**
 * Gathers the threads of `sessionId`'s owner at its boundary: the subjects it shares with earlier
 * sessions start threads, and every thread is rebuilt from the owner's user turns.
 */
export async function gatherThreads(deps: GatherThreadsDeps, sessionId: string): Promise<GatherReport> {
  const report: GatherReport = { session: sessionId, written: [], started: [] }
  const conversation = await deps.context.findConversation(sessionId, deps.agent)
  if (!conversation) return report
  // Every user turn of the same owner, oldest first: read once per process, then only what is new —
  // an owner kept reads its boundary's conversation only (another grows through its own boundary).
  const { kept, turns: owner } = ownerTurns(deps.context, conversation.user ?? '', () => ({ lastSeq: new Map(), awaiting: new Map(), turns: [], df: new Map(), saying: new Map(), sessionsOf: new Map(), surface: new Map() }))
  let added = false
  const reading = kept ? [conversation] : (await deps.context.listConversations(deps.agent)).filter((other) => other.user === conversation.user)
  for (const c of reading) {
    const seen = owner.lastSeq.get(c.id)
    // A conversation read before grows only through its own boundary, which reads what it added.
    if (seen !== undefined && c.id !== conversation.id) continue
    let last = seen ?? 0
    for (const message of await deps.context.messages(c.id, { fromSeq: last + 1 })) {
      last = Math.max(last, message.seq)
      // The message after a turn answers it when the agent said it.
      const asked = owner.awaiting.get(c.id)
      owner.awaiting.delete(c.id)
      if (asked !== undefined && message.role === 'assistant' && message.content.trim() !== '') asked.reply = message.id
      if (message.role !== 'user' || message.content.trim() === '') continue
      owner.awaiting.set(c.id, addTurn(owner, message, c.sessionId))
      added = true
    }
    owner.lastSeq.set(c.id, last)
  }
  const { turns, df, sessionsOf, surface } = owner
  if (added && turns.some((turn, i) => i > 0 && inTime(turns[i - 1] as Turn, turn) > 0)) turns.sort(inTime)
  const mine = turns.filter((turn) => turn.session === sessionId)
  if (mine.length === 0) return report

  const information = new Map<string, number>()
  const bits = (s: string): number => {
    const known = information.get(s)
    if (known !== undefined) return known
    const b = Math.log2(turns.length / (df.get(s) ?? turns.length))
    information.set(s, b)
    return b
  }
  const wordOf = (s: string): string => [...(surface.get(s) ?? new Map([[s, 1]]))].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? s

  // The threads there are, by the stem of their subject: a slug is its subject word (`slugOf`).
  owner.threads ??= await readHeld(deps.documents)
  const held = owner.threads
  const existing = new Map([...held].map(([s, thread]) => [s, thread.slug]))
  // This session's new subjects: shared with an earlier session, informative, most said here.
  const saidHere = new Map<string, number>()
  for (const turn of mine) for (const s of turn.counts.keys()) saidHere.set(s, (saidHere.get(s) ?? 0) + 1)
  const fresh = [...saidHere]
    .filter(([s]) => !existing.has(s) && (sessionsOf.get(s)?.size ?? 0) >= 2 && bits(s) >= MIN_BITS)
    .map(([s]) => ({ s, salience: (df.get(s) ?? 0) * bits(s) }))
    .sort((a, b) => b.salience - a.salience || a.s.localeCompare(b.s))
    .slice(0, NEW_SUBJECTS)
  for (const { s } of fresh) {
    const slug = slugOf(wordOf(s))
    if (slug === '' || [...existing.values()].includes(slug)) continue
    existing.set(s, slug)
    report.started.push(slug)
  }

  // Every thread the session adds to: a new one written whole, a thread there is grown by the lines of
  // its turns it does not hold yet (appended: its history is the turns themselves, so no version is kept).
  // A turn is about the subject it says most, by its information: a word in passing is not what it is about.
  const about = new Map<Turn, Set<string>>()
  const aboutOf = (turn: Turn): Set<string> => {
    let subjects = about.get(turn)
    if (subjects === undefined) {
      const ranked = [...turn.counts].filter(([s]) => existing.has(s)).map(([s, count]) => ({ s, weight: count * bits(s) }))
      subjects = new Set(ranked.sort((a, b) => b.weight - a.weight || (a.s < b.s ? -1 : a.s > b.s ? 1 : 0)).slice(0, TURN_SUBJECTS).map(({ s }) => s))
      about.set(turn, subjects)
    }
    return subjects
  }
  const touched = new Set(mine.flatMap((turn) => [...aboutOf(turn)]))
  const growing: Array<{ s: string; slug: string; holding: Set<number> | undefined; adding: Turn[] }> = []
  for (const [s, slug] of existing) {
    if (!touched.has(s)) continue
    const holding = held.get(s)?.turns
    const adding = (owner.saying.get(s) ?? []).filter((turn) => !holding?.has(turn.id) && aboutOf(turn).has(s)).sort(inTime)
    if (adding.length > 0) growing.push({ s, slug, holding, adding })
  }
  // The turns the lines quote, read once for every thread the boundary writes.
  const said = new Map((await deps.context.messagesById([...new Set(growing.flatMap(({ adding }) => adding.map((turn) => turn.id)))])).map((message) => [message.id, message]))
  try {
    for (const { s, slug, holding, adding } of growing) {
      const lined = adding.flatMap((turn) => {
        const message = said.get(turn.id)
        return message === undefined ? [] : [{ turn, line: threadLine(message, s, turn.reply) }]
      })
      if (lined.length === 0) continue
      // One write a thread a boundary: a new thread whole, a thread there is grown by its new lines.
      const subject = wordOf(s)
      const lines = lined.map(({ line }) => line).join('\n')
      if (holding === undefined) await deps.documents.write('thread', slug, { subject }, `# ${subject}\n\n${lines}\n`)
      else await deps.documents.append('thread', slug, `${lines}\n`)
      const thread = held.get(s) ?? { slug, turns: new Set<number>() }
      for (const { turn } of lined) thread.turns.add(turn.id)
      held.set(s, thread)
      report.written.push(slug)
    }
  } catch (error) {
    // What a failed write left is read again from the documents at the next boundary.
    owner.threads = undefined
    throw error
  }
  return report
}
