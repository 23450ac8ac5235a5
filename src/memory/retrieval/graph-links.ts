/**
 * What graph diffusion (search.ts stage 5) spreads along, and how far similarity may carry a note.
 *
 * Explicit `[[links]]` are associations a person or the agent wrote on purpose; they resolve in the
 * tree of the note that holds them first (a user's notes name that user's notes — decision 0046), then
 * the agent's, then the shared one. Strong-similarity edges are inferred: a note that merely
 * resembles a relevant one has shown nothing about the question, so similarity alone never lifts
 * it above a note a relevant one links to (`capSimilarityLift`).
 */
import type { ScoreTerms } from './search.ts'

/**
 * The trees a `[[link]]` in the unit at `source` resolves in, in order (decision 0046): the tree of the
 * note that holds it (a user's, the agent's or the shared one), then the agent's, then the shared
 * one. A link in Ada's note names Ada's note of that name before the agent's; a link in a profile
 * (`shared/users/<key>.md`) resolves in that user's tree.
 */
function linkTrees(source: string, agent: string | undefined): string[] {
  let own: string | undefined
  const inAgent = /^agents\/([^/]+)\/(?:(users\/[^/]+)\/)?/.exec(source)
  if (inAgent) own = inAgent[2] === undefined ? `agents/${inAgent[1]}` : `agents/${inAgent[1]}/${inAgent[2]}`
  else if (source.startsWith('shared/users/') && agent !== undefined) own = `agents/${agent}/users/${source.slice('shared/users/'.length).replace(/\.md$/, '')}`
  else if (source.startsWith('shared/')) own = 'shared'
  return [...new Set([own, agent === undefined ? undefined : `agents/${agent}`, 'shared'].filter((tree): tree is string => tree !== undefined))]
}

/**
 * Ids a `[[link]]` in the unit at `source` may name, best first: a unit id, a source's first chunk,
 * a note by slug (`[[falcon-owner]]`) or by path in its tree (`[[knowledge/falcon-owner]]`) in each
 * of `linkTrees`, or a memory path (`[[users/ada/knowledge/x]]`) or home-relative path. Whose units
 * the reader may see is checked where they are read (passesFilter), not here.
 */
export function linkTargets(link: string, source: string, agent: string | undefined): string[] {
  const target = (link.split('|')[0] ?? '').trim()
  if (target === '') return []
  const out = [target, `${target}#0`]
  // `[[note#Heading]]` names the note (its first chunk); a unit id with its `#` was tried just above.
  const name = target.replace(/#.*$/, '').trim()
  if (name === '') return out
  const file = name.endsWith('.md') ? name : `${name}.md`
  const trees = linkTrees(source, agent)
  if (!name.includes('/')) {
    for (const tree of trees) out.push(`${tree}/knowledge/${file}#0`, `${tree}/procedures/${file}#0`, `${tree}/episodes/${file}#0`)
  } else if (name.startsWith('agents/') || name.startsWith('shared/')) {
    out.push(`${file}#0`)
  } else if (name.startsWith('users/')) {
    if (agent !== undefined) out.push(`agents/${agent}/${file}#0`)
  } else {
    for (const tree of trees) out.push(`${tree}/${file}#0`)
  }
  return out
}

/** What the cap needs of a scored candidate. */
interface Ranked {
  unit: { id: string }
  terms: ScoreTerms
  score: number
}

/** A candidate's score without its graph term. */
const withoutGraph = (s: Ranked): number => (s.terms.fused + s.terms.recency + s.terms.frequency) * s.terms.history

/**
 * Similarity is no evidence on its own (decision 0046: an unrelated note got graph 0.232 on lexical
 * 0.112 and ranked above the note the best hit links to). A candidate joined to the graph by
 * similarity edges only (`linked` holds every node at either end of a link edge):
 * - gains from the graph at most what it matched itself (its fused relevance): a note the question
 *   does not match at all is lifted by nothing, one it matches weakly is lifted a little;
 * - rises on that gain up to — never past — each linked candidate it scored below without it. What
 *   its own evidence puts above a linked note stays there.
 * Changes `graph` and `score` in place; the caller sorts afterwards.
 */
export function capSimilarityLift(scored: Ranked[], linked: ReadonlySet<string>): void {
  if (linked.size === 0) return
  const linkedScores = scored.filter((s) => linked.has(s.unit.id) && Number.isFinite(s.score)).map((s) => s.score)
  for (const s of scored) {
    if (linked.has(s.unit.id) || s.terms.graph <= 0 || !Number.isFinite(s.score)) continue
    s.terms.graph = Math.min(s.terms.graph, s.terms.fused)
    const own = withoutGraph(s)
    let ceiling = Number.POSITIVE_INFINITY
    for (const score of linkedScores) if (score >= own && score < ceiling) ceiling = score
    // Just below the linked note: a tie would be broken by id, not by evidence.
    if (own + s.terms.graph * s.terms.history >= ceiling) s.terms.graph = Math.max(0, (ceiling - 1e-9) / s.terms.history - (s.terms.fused + s.terms.recency + s.terms.frequency))
    s.score = own + s.terms.graph * s.terms.history
  }
}
