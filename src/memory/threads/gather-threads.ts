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
 * the subjects of a conversation lie between. A word is a subject only when it starts with a letter
 * (`120ms`, `768px` are quantities). A thread once started gathers every later turn that says its
 * word, rebuilt whole from the turns each time, so gathering twice writes nothing new. Each line is
 * the turn's day and the sentences of it that say the subject: what was said about it, not the turn.
 *
 * Only what the user (the sessions' `user`-role speakers) said is gathered: a question about the
 * whole story is about what they brought up; the agent's replies are reached from the turns.
 */
import type { Clock } from '../../core/clock.ts'
import type { StoredMessage } from '../../core/message.ts'
import type { ContextStore, DocumentStore } from '../../storage/contracts.ts'
import { stem, STOP_WORDS, words } from '../../text/analyse.ts'

/** Threads a boundary may start (the session's most informative new subjects); existing threads always grow. */
const NEW_SUBJECTS = 2
/** A subject's least information over the user's turns, in bits: said in at most half of them. */
const MIN_BITS = 1
/** A word shorter than this is not a subject (units, abbreviations of a letter or two). */
const MIN_SUBJECT_CHARS = 3
/** The longest line a thread keeps of one turn (the turn itself is a pointer away). */
const LINE_CHARS = 400

export interface GatherThreadsDeps {
  context: Pick<ContextStore, 'findConversation' | 'listConversations' | 'messages'>
  /** The session owner's documents (the user's tree, the agent's without a user). */
  documents: Pick<DocumentStore, 'slugs' | 'read' | 'write'>
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

interface Turn {
  message: StoredMessage
  stems: Set<string>
  session: string
}

/** A thread's document slug for a subject word. */
function slugOf(word: string): string {
  return word.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '').slice(0, 60)
}

/** One dated line of a thread: its day, its speaker when named, the sentences that say the subject (stem `subject`), on one line. */
export function threadLine(message: Pick<StoredMessage, 'at' | 'name' | 'content'>, subject: string): string {
  const sentences = message.content.split(/(?<=[.!?])\s+|\n+/).map((sentence) => sentence.replace(/\s+/g, ' ').trim())
  const about = sentences.filter((sentence) => words(sentence).some((word) => stem(word) === subject))
  let said = (about.length > 0 ? about : sentences).filter((sentence) => sentence !== '').join(' … ')
  if (said.length > LINE_CHARS) said = `${said.slice(0, LINE_CHARS - 1).trimEnd()}…`
  return `- ${message.at.slice(0, 10)}${message.name ? ` ${message.name}:` : ':'} ${said}`
}

/** The message ids a thread points back to, in time order (its `messages` frontmatter field). */
export function threadMessageIds(frontmatter: Record<string, unknown>): string[] {
  const value = frontmatter.messages
  // One id alone reads back as a number.
  return typeof value === 'string' || typeof value === 'number' ? String(value).split(/\s+/).filter((id) => /^\d+$/.test(id)) : []
}

/**
 * Gathers the threads of `sessionId`'s owner at its boundary: the subjects it shares with earlier
 * sessions start threads, and every thread is rebuilt from the owner's user turns.
 */
export async function gatherThreads(deps: GatherThreadsDeps, sessionId: string): Promise<GatherReport> {
  const report: GatherReport = { session: sessionId, written: [], started: [] }
  const conversation = await deps.context.findConversation(sessionId, deps.agent)
  if (!conversation) return report
  // Every user turn of the same owner, oldest first.
  const conversations = (await deps.context.listConversations(deps.agent)).filter((c) => c.user === conversation.user)
  const turns: Turn[] = []
  const surface = new Map<string, Map<string, number>>()
  for (const c of conversations) {
    for (const message of await deps.context.messages(c.id)) {
      if (message.role !== 'user' || message.content.trim() === '') continue
      const stems = new Set<string>()
      for (const word of words(message.content)) {
        if (STOP_WORDS.has(word) || word.length < MIN_SUBJECT_CHARS || !/^\p{L}/u.test(word)) continue
        const s = stem(word)
        stems.add(s)
        const forms = surface.get(s) ?? new Map<string, number>()
        forms.set(word, (forms.get(word) ?? 0) + 1)
        surface.set(s, forms)
      }
      turns.push({ message, stems, session: c.sessionId })
    }
  }
  turns.sort((a, b) => a.message.at.localeCompare(b.message.at) || a.message.id - b.message.id)
  const mine = turns.filter((turn) => turn.session === sessionId)
  if (mine.length === 0) return report

  const df = new Map<string, number>()
  const sessionsOf = new Map<string, Set<string>>()
  for (const turn of turns) {
    for (const s of turn.stems) {
      df.set(s, (df.get(s) ?? 0) + 1)
      const sessions = sessionsOf.get(s) ?? new Set<string>()
      sessions.add(turn.session)
      sessionsOf.set(s, sessions)
    }
  }
  const bits = (s: string): number => Math.log2(turns.length / (df.get(s) ?? turns.length))
  const wordOf = (s: string): string => [...(surface.get(s) ?? new Map([[s, 1]]))].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? s

  // The threads there are, by the stem of their subject: a slug is its subject word (`slugOf`).
  const existing = new Map<string, string>()
  for (const slug of await deps.documents.slugs('thread')) existing.set(stem(slug), slug)
  // This session's new subjects: shared with an earlier session, informative, most said here.
  const saidHere = new Map<string, number>()
  for (const turn of mine) for (const s of turn.stems) saidHere.set(s, (saidHere.get(s) ?? 0) + 1)
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

  // Every thread the session adds to, rebuilt whole from the turns that say its subject.
  for (const [s, slug] of existing) {
    if (!saidHere.has(s)) continue
    const members = turns.filter((turn) => turn.stems.has(s))
    const ids = members.map((turn) => String(turn.message.id)).join(' ')
    const before = await deps.documents.read('thread', slug)
    if (before && before.frontmatter.messages === ids) continue
    const subject = wordOf(s)
    const body = `# ${subject}\n\n${members.map((turn) => threadLine(turn.message, s)).join('\n')}\n`
    await deps.documents.write('thread', slug, { subject, messages: ids, updated_at: deps.clock.now().toISOString() }, body)
    report.written.push(slug)
  }
  return report
}
