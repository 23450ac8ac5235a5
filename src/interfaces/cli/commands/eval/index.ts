/**
 * `engram eval retrieval FILE… --run OUT.jsonl [--conversations N] [--embedder NAME]`: the
 * retrieval evaluation of ../shared/bench/FORMAT.md through the recall path an agent uses,
 * with plain BM25 over turns beside it, computed in the same run. Several files (data sets of
 * different kinds: LoCoMo, BEAM) run one after the other, each printed beside its BM25 with the
 * categories that fall below it, then one line per set and their mean: a change is kept when it
 * helps the mean and hurts no set (decision 0012).
 */
import { closeSync, openSync, writeSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { loadEvalDataset } from '../../../../eval/retrieval-dataset.ts'
import { belowBaseline, formatBelowBaseline, formatMetricsTable, type Summary, summariseByCategory } from '../../../../eval/retrieval-metrics.ts'
import { type EvaluatedQuestion, runRetrievalEval } from '../../../../eval/run-retrieval-eval.ts'
import { BACKENDS, backendEntryNamed } from '../../../../storage/backends.ts'
import type { Command } from '../../command.ts'
import { withProgress } from '../../progress.ts'

function usage(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

/** `engram eval retrieval`. */
export const evalCommand: Command = {
  path: ['eval', 'retrieval'],
  usage: 'FILE [FILE…] --run OUT.jsonl [--conversations N] [--embedder none|hash-v1|glove-100d-sif] [--backend embedded|postgres]',
  examples: ['engram eval retrieval locomo.json --run runs/locomo.jsonl --conversations 2 --embedder hash-v1'],
  home: 'checks',
  options: {
    run: { type: 'string', description: 'write the run file (JSON lines, one per question) here; with several files, OUT.<data set>.jsonl each', valueName: 'OUT.jsonl' },
    conversations: { type: 'string', description: 'only the first N conversations', valueName: 'N' },
    embedder: { type: 'string', description: 'offline embedder of the minds under test, or none (default: the configured one)', valueName: 'NAME' },
    backend: { type: 'string', description: 'embedded (default), or postgres: each conversation in a schema of its own on ENGRAM_DATABASE_URL, dropped afterwards', valueName: 'NAME' },
  },
  async run(context) {
    const files = context.args
    if (files.length === 0) throw usage('engram eval retrieval needs a data file.', 'Write e.g. `engram eval retrieval ../shared/bench/locomo10.eval.json ../shared/bench/beam500k-dev.eval.json --run /tmp/run.jsonl`.')
    const runPath = typeof context.options.run === 'string' ? context.options.run : undefined
    if (runPath === undefined) throw usage('engram eval retrieval needs --run OUT.jsonl.', 'Add --run /tmp/run.jsonl: the run file is the record of what recall returned.')
    let conversations: number | undefined
    if (context.options.conversations !== undefined) {
      conversations = Number(context.options.conversations)
      if (!Number.isInteger(conversations) || conversations < 1) throw usage(`--conversations expects a whole number ≥ 1, got ${JSON.stringify(context.options.conversations)}.`, 'Write e.g. --conversations 2.')
    }
    const settings: Record<string, unknown> = { ...context.settings }
    const embedder = context.options.embedder
    if (typeof embedder === 'string') {
      if (embedder === 'none') settings['embed.provider'] = 'none'
      else {
        settings['embed.provider'] = 'offline'
        settings['embed.model'] = embedder
      }
    }
    // The backends are the table's (storage/backends.ts): one without a URL, the others on ENGRAM_DATABASE_URL.
    const backendNames = BACKENDS.map((entry) => entry.name)
    const asked = context.options.backend ?? backendNames[0]
    const backend = typeof asked === 'string' ? backendEntryNamed(asked) : undefined
    if (!backend) throw usage(`--backend must be ${backendNames.join(' or ')}, not ${JSON.stringify(asked)}.`, `Write --backend ${backendNames.at(-1)} with ENGRAM_DATABASE_URL set, or leave it out.`)
    const needsUrl = backend.schemes.length > 0
    const databaseUrl = needsUrl ? (typeof settings['storage.url'] === 'string' ? settings['storage.url'] : context.io.env.ENGRAM_DATABASE_URL) : undefined
    if (needsUrl && !databaseUrl) throw usage(`--backend ${backend.name} needs the database: ENGRAM_DATABASE_URL is not set.`, `Set ENGRAM_DATABASE_URL=${backend.example} (the eval makes and drops a schema per conversation there).`)
    const at = (path: string): string => (isAbsolute(path) ? path : resolve(context.io.cwd, path))
    // Every file is checked before the first one runs: a typo in the second must not cost the first's run.
    const datasets = files.map((file) => loadEvalDataset(at(file)))
    const names = datasets.map((dataset) => dataset.name)
    if (new Set(names).size !== names.length) throw usage(`Two of the files are the same data set (${names.join(', ')}).`, 'Pass each data set once.')
    const runFileOf = (name: string): string => (datasets.length === 1 ? at(runPath) : `${at(runPath).replace(/\.jsonl$/, '')}.${name.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`)
    const results: Array<{ dataset: string; run: string; questions: number; engram: Array<{ label: string; summary: Summary }>; bm25: Array<{ label: string; summary: Summary }>; below: ReturnType<typeof belowBaseline> }> = []
    const human: string[] = []
    // An eval keeps nothing between runs (each conversation's home is temporary): stopped, it starts over.
    const resume = 'The run file holds the questions answered so far. Run the same `engram eval retrieval` again to start over (it rewrites the run file).'
    return withProgress(context, { command: 'eval', resume }, async (progress) => {
      for (const dataset of datasets) {
        const run = runFileOf(dataset.name)
        const fd = openSync(run, 'w')
        let questions: EvaluatedQuestion[]
        try {
          questions = await runRetrievalEval(dataset, {
            conversations,
            settings,
            ...(databaseUrl ? { databaseUrl } : {}),
            onLine: (line) => writeSync(fd, `${JSON.stringify(line)}\n`),
            ...progress,
          })
        } finally {
          closeSync(fd)
        }
        const engram = summariseByCategory(questions.map((q) => ({ category: q.category, metrics: q.engram })))
        const bm25 = summariseByCategory(questions.map((q) => ({ category: q.category, metrics: q.bm25 })))
        const below = belowBaseline(questions.filter((q) => q.category !== 'adversarial').map((q) => ({ category: q.category, engram: q.engram, baseline: q.bm25 })))
        results.push({ dataset: dataset.name, run, questions: questions.length, engram, bm25, below })
        const table = formatMetricsTable([
          { name: 'engram', rows: engram },
          { name: 'bm25', rows: bm25 },
        ])
        human.push(`${dataset.name}: ${questions.length} questions; run file ${run}\n\n${table}\n${formatBelowBaseline(below)}\n`)
      }
      if (results.length > 1) {
        const overall = (rows: Array<{ label: string; summary: Summary }>): Summary | undefined => rows.find((row) => row.label === 'overall')?.summary
        const f = (x: number | undefined): string => (x === undefined ? '    -' : x.toFixed(1).padStart(5))
        const lines = [`${'data set'.padEnd(24)}  R@10 R@2048  bm25 R@10 R@2048  upd>st  p95ms`]
        const mean = { r10: 0, r2048: 0 }
        for (const result of results) {
          const e = overall(result.engram)
          const b = overall(result.bm25)
          mean.r10 += (e?.recall[10] ?? 0) / results.length
          mean.r2048 += (e?.budget[2048] ?? 0) / results.length
          lines.push(`${result.dataset.padEnd(24)} ${f(e?.recall[10])}  ${f(e?.budget[2048])}       ${f(b?.recall[10])}  ${f(b?.budget[2048])}  ${f(e?.updOverStale).padStart(6)} ${(e?.p95 ?? 0).toFixed(1).padStart(6)}`)
        }
        lines.push(`${'mean'.padEnd(24)} ${f(mean.r10)}  ${f(mean.r2048)}`)
        human.push(lines.join('\n'))
      }
      return {
        data: results.length === 1 ? { ...results[0] } : { datasets: results },
        human: `${human.join('\n')}\n`,
      }
    })
  },
}
