/**
 * Graph diffusion: personalized PageRank over a small graph built around the best candidates
 * (their explicit `[[links]]` and strong-similarity edges among them). Activation starts at the
 * candidates in proportion to their relevance and spreads along the edges, so a memory linked to
 * several relevant ones is lifted even when it shares no word with the query (Collins & Loftus'
 * spreading activation, the seed's optional term).
 *
 * Bounded by construction: the graph is the top-N candidates and their direct links only, and a
 * fixed number of power iterations runs over it — never the whole index.
 */

export interface DiffusionGraph {
  /** Node ids. */
  nodes: string[]
  /** Undirected weighted edges between node ids. */
  edges: Array<{ a: string; b: string; weight: number }>
  /** Where the walk restarts, by node id (non-negative; normalised here). */
  personalization: Map<string, number>
}

export interface PageRankOptions {
  /** Probability of following an edge rather than restarting (0.85, the usual). */
  damping?: number
  iterations?: number
  /** Stop early when the L1 change of one iteration falls below this. */
  tolerance?: number
}

/**
 * Personalized PageRank by power iteration. Returns each node's stationary probability (sums to
 * 1). A node without edges keeps only its restart mass; a walker at such a node restarts.
 */
export function personalizedPageRank(graph: DiffusionGraph, options: PageRankOptions = {}): Map<string, number> {
  const damping = options.damping ?? 0.85
  const iterations = options.iterations ?? 30
  const tolerance = options.tolerance ?? 1e-9
  const n = graph.nodes.length
  const out = new Map<string, number>()
  if (n === 0) return out
  const position = new Map(graph.nodes.map((id, i) => [id, i]))
  const neighbours: Array<Array<{ to: number; weight: number }>> = graph.nodes.map(() => [])
  for (const edge of graph.edges) {
    const a = position.get(edge.a)
    const b = position.get(edge.b)
    if (a === undefined || b === undefined || a === b || !(edge.weight > 0)) continue
    neighbours[a]?.push({ to: b, weight: edge.weight })
    neighbours[b]?.push({ to: a, weight: edge.weight })
  }
  const strength = neighbours.map((list) => list.reduce((sum, e) => sum + e.weight, 0))

  const restart = new Float64Array(n)
  let restartTotal = 0
  for (const [id, value] of graph.personalization) {
    const i = position.get(id)
    if (i === undefined || !(value > 0)) continue
    restart[i] = (restart[i] as number) + value
    restartTotal += value
  }
  if (restartTotal === 0) restart.fill(1 / n)
  else for (let i = 0; i < n; i++) restart[i] = (restart[i] as number) / restartTotal

  let rank = Float64Array.from(restart)
  for (let iteration = 0; iteration < iterations; iteration++) {
    const next = new Float64Array(n)
    let dangling = 0
    for (let i = 0; i < n; i++) {
      const mass = rank[i] as number
      const s = strength[i] as number
      if (s === 0) {
        dangling += mass
        continue
      }
      for (const edge of neighbours[i] as Array<{ to: number; weight: number }>) next[edge.to] = (next[edge.to] as number) + damping * mass * (edge.weight / s)
    }
    // Restart mass plus whatever sat on nodes without edges goes back to the personalization.
    const back = 1 - damping + damping * dangling
    let change = 0
    for (let i = 0; i < n; i++) {
      next[i] = (next[i] as number) + back * (restart[i] as number)
      change += Math.abs((next[i] as number) - (rank[i] as number))
    }
    rank = next
    if (change < tolerance) break
  }
  for (const [i, id] of graph.nodes.entries()) out.set(id, rank[i] as number)
  return out
}
