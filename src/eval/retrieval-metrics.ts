/**
 * The metrics of ../shared/bench/FORMAT.md, per question, then averaged per category and overall
 * (overall = every category but `adversarial`, which is reported on its own line).
 */

export const RANK_CUTOFFS = [1, 5, 10, 25, 50] as const
export const CONTEXT_BUDGETS = [512, 1024, 2048] as const

/** One line of a run file. */
export interface RunLine {
  id: string
  ranked: string[]
  contexts: Record<string, string>
  ms: number
}

/** What scoring needs to know about a question. */
export interface ScoredQuestion {
  category: string
  evidence: readonly string[]
  staleEvidence?: readonly string[]
}

export interface QuestionMetrics {
  recall: Record<number, number>
  all10: number
  hit10: number
  mrr: number
  budget: Record<number, number>
  /** Undefined when the question has no stale evidence. */
  updOverStale: number | undefined
  ms: number
}

export interface Summary {
  n: number
  recall: Record<number, number>
  all10: number
  hit10: number
  mrr: number
  budget: Record<number, number>
  updOverStale: number | undefined
  staleN: number
  p50: number
  p95: number
}

/**
 * A text as a reader takes it in, for the R@B check: whitespace folded, and what a prompt's framing
 * adds or drops without changing what is said folded the same way on both sides — the escaping of
 * recalled text (`&lt;` for a tag's `<`, a backslash before a `#` run, a fence or a break; decision
 * 0028) and markdown's emphasis and heading marks (`**`, `## `), which priming leaves out of a
 * message folded onto one line (decision 0075). The words, numbers, code and their order stay: a turn
 * counts only when all of it was packed.
 */
function asRead(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/\\(?=[#\uFF03\uFE5F`~*_=-])/g, '')
    .replace(/\*\*/g, '')
    .replace(/(^|\s)#{1,6}(?=\s)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
}

/**
 * Metrics of one question. `turnText` gives the text of a turn id. R@B counts a gold turn only when
 * its whole text, as read (`asRead`), is in the context packed within B: a turn whose unit ranked
 * within the budget but whose text was cut, or only pointed to, does not count. The whole turn,
 * because which part of a turn carries the evidence is known only from the answer, which scoring
 * never reads (FORMAT.md).
 */
export function questionMetrics(question: ScoredQuestion, line: RunLine, turnText: (id: string) => string | undefined): QuestionMetrics {
  const gold = question.evidence
  const rankOf = new Map<string, number>()
  line.ranked.forEach((id, i) => {
    if (!rankOf.has(id)) rankOf.set(id, i)
  })
  const within = (id: string, k: number): boolean => (rankOf.get(id) ?? Number.POSITIVE_INFINITY) < k
  const recall: Record<number, number> = {}
  for (const k of RANK_CUTOFFS) recall[k] = gold.filter((id) => within(id, k)).length / gold.length
  let first = Number.POSITIVE_INFINITY
  for (const id of gold) first = Math.min(first, rankOf.get(id) ?? Number.POSITIVE_INFINITY)
  const budget: Record<number, number> = {}
  for (const B of CONTEXT_BUDGETS) {
    const context = line.contexts[String(B)] ?? ''
    if (context.length / 4 > B) {
      budget[B] = 0
      continue
    }
    const read = asRead(context)
    budget[B] = gold.filter((id) => {
      const text = turnText(id)
      const said = text === undefined ? '' : asRead(text)
      return said !== '' && read.includes(said)
    }).length / gold.length
  }
  let updOverStale: number | undefined
  if (question.staleEvidence && question.staleEvidence.length > 0) {
    let stale = Number.POSITIVE_INFINITY
    for (const id of question.staleEvidence) stale = Math.min(stale, rankOf.get(id) ?? Number.POSITIVE_INFINITY)
    updOverStale = first < stale ? 1 : 0
  }
  return {
    recall,
    all10: gold.every((id) => within(id, 10)) ? 1 : 0,
    hit10: gold.some((id) => within(id, 10)) ? 1 : 0,
    mrr: Number.isFinite(first) ? 1 / (first + 1) : 0,
    budget,
    updOverStale,
    ms: line.ms,
  }
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number
}

/** Averages (as percentages) and latency percentiles of a set of questions. */
export function summarise(rows: readonly QuestionMetrics[]): Summary {
  const n = rows.length
  const mean = (f: (m: QuestionMetrics) => number): number => (n === 0 ? 0 : (100 * rows.reduce((sum, m) => sum + f(m), 0)) / n)
  const recall: Record<number, number> = {}
  for (const k of RANK_CUTOFFS) recall[k] = mean((m) => m.recall[k] ?? 0)
  const budget: Record<number, number> = {}
  for (const B of CONTEXT_BUDGETS) budget[B] = mean((m) => m.budget[B] ?? 0)
  const stale = rows.filter((m) => m.updOverStale !== undefined)
  const ms = rows.map((m) => m.ms).sort((a, b) => a - b)
  return {
    n,
    recall,
    all10: mean((m) => m.all10),
    hit10: mean((m) => m.hit10),
    mrr: mean((m) => m.mrr),
    budget,
    updOverStale: stale.length === 0 ? undefined : (100 * stale.reduce((sum, m) => sum + (m.updOverStale as number), 0)) / stale.length,
    staleN: stale.length,
    p50: percentile(ms, 0.5),
    p95: percentile(ms, 0.95),
  }
}

export const ADVERSARIAL = 'adversarial'

/** Summaries per category, `overall` (all but adversarial) and `adversarial` when present. */
export function summariseByCategory(rows: ReadonlyArray<{ category: string; metrics: QuestionMetrics }>): Array<{ label: string; summary: Summary }> {
  const categories = [...new Set(rows.map((r) => r.category))].filter((c) => c !== ADVERSARIAL).sort()
  const out = categories.map((c) => ({ label: c, summary: summarise(rows.filter((r) => r.category === c).map((r) => r.metrics)) }))
  out.push({ label: 'overall', summary: summarise(rows.filter((r) => r.category !== ADVERSARIAL).map((r) => r.metrics)) })
  const adversarial = rows.filter((r) => r.category === ADVERSARIAL)
  if (adversarial.length > 0) out.push({ label: ADVERSARIAL, summary: summarise(adversarial.map((r) => r.metrics)) })
  return out
}

/** The table printed by `engram eval retrieval`: one row per category and system. */
export function formatMetricsTable(systems: ReadonlyArray<{ name: string; rows: Array<{ label: string; summary: Summary }> }>): string {
  const f = (x: number | undefined): string => (x === undefined ? '    -' : x.toFixed(1).padStart(5))
  const width = Math.max(12, ...systems.flatMap((system) => system.rows.map((r) => r.label.length)))
  const head = `${'category'.padEnd(width)} ${'system'.padEnd(8)} ${'n'.padStart(5)}   R@1   R@5  R@10  R@25  R@50 All10 Hit10   MRR  R512 R1024 R2048 upd>st   p50ms  p95ms`
  const lines = [head]
  const labels = systems[0]?.rows.map((r) => r.label) ?? []
  for (const label of labels) {
    for (const system of systems) {
      const s = system.rows.find((r) => r.label === label)?.summary
      if (!s) continue
      lines.push(
        `${label.padEnd(width)} ${system.name.padEnd(8)} ${String(s.n).padStart(5)} ${RANK_CUTOFFS.map((k) => f(s.recall[k])).join(' ')} ${f(s.all10)} ${f(s.hit10)} ${f(s.mrr)} ${CONTEXT_BUDGETS.map((B) => f(s.budget[B])).join(' ')} ${f(s.updOverStale).padStart(6)} ${s.p50.toFixed(2).padStart(7)} ${s.p95.toFixed(2).padStart(6)}`,
      )
    }
  }
  return lines.join('\n')
}

/** How a category compares with the baseline: questions with a gold turn in the top 10, and R@10. */
export interface BaselineGap {
  category: string
  n: number
  /** Questions with a gold turn in the top 10: engram's and the baseline's. */
  hits: { engram: number; baseline: number }
  r10: { engram: number; baseline: number }
}

/**
 * The categories where the baseline does better: it finds a gold turn in its top 10 for more than
 * `slack` questions more than engram does (one by default: a single question is within noise), or its R@10 is higher.
 */
export function belowBaseline(rows: ReadonlyArray<{ category: string; engram: QuestionMetrics; baseline: QuestionMetrics }>, slack = 1): { hits: BaselineGap[]; recall: BaselineGap[] } {
  const gaps: BaselineGap[] = []
  for (const category of [...new Set(rows.map((row) => row.category))].sort()) {
    const mine = rows.filter((row) => row.category === category)
    const sum = (f: (row: (typeof mine)[number]) => number): number => mine.reduce((total, row) => total + f(row), 0)
    gaps.push({
      category,
      n: mine.length,
      hits: { engram: sum((row) => row.engram.hit10), baseline: sum((row) => row.baseline.hit10) },
      r10: { engram: (100 * sum((row) => row.engram.recall[10] ?? 0)) / mine.length, baseline: (100 * sum((row) => row.baseline.recall[10] ?? 0)) / mine.length },
    })
  }
  return {
    hits: gaps.filter((gap) => gap.hits.baseline - gap.hits.engram > slack),
    recall: gaps.filter((gap) => gap.r10.baseline > gap.r10.engram),
  }
}

/** The line under each data set's table: which categories fall below the baseline, or none. */
export function formatBelowBaseline(below: { hits: BaselineGap[]; recall: BaselineGap[] }): string {
  const hits = below.hits.length === 0 ? 'none' : below.hits.map((gap) => `${gap.category} (${gap.hits.baseline} vs ${gap.hits.engram} of ${gap.n})`).join(', ')
  const recall = below.recall.length === 0 ? 'none' : below.recall.map((gap) => `${gap.category} (${gap.r10.baseline.toFixed(1)} vs ${gap.r10.engram.toFixed(1)})`).join(', ')
  return `below bm25 — questions with a gold turn in the top 10, bm25 ahead by more than one: ${hits}; R@10 below bm25: ${recall}`
}
