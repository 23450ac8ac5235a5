/**
 * `engram eval retrieval FILE --run OUT.jsonl [--conversations N] [--embedder NAME]`: the
 * retrieval evaluation of ../shared/bench/FORMAT.md through the recall path an agent uses,
 * with plain BM25 over turns beside it, computed in the same run.
 */
import { closeSync, openSync, writeSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { loadEvalDataset } from '../../../../eval/retrieval-dataset.ts'
import { formatMetricsTable, summariseByCategory } from '../../../../eval/retrieval-metrics.ts'
import { type EvaluatedQuestion, runRetrievalEval } from '../../../../eval/run-retrieval-eval.ts'
import type { Command } from '../../command.ts'

function usage(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

/** `engram eval retrieval`. */
export const evalCommand: Command = {
  path: ['eval', 'retrieval'],
  summary: 'Measure recall on a retrieval-eval/1 file (e.g. LoCoMo) through the real recall path, beside plain BM25',
  usage: 'eval retrieval FILE --run OUT.jsonl [--conversations N] [--embedder none|hash-v1|glove-100d-sif]',
  options: {
    run: { type: 'string', description: 'write the run file (JSON lines, one per question) here', valueName: 'OUT.jsonl' },
    conversations: { type: 'string', description: 'only the first N conversations', valueName: 'N' },
    embedder: { type: 'string', description: 'offline embedder of the minds under test, or none (default: the configured one)', valueName: 'NAME' },
  },
  async run(context) {
    const file = context.args[0]
    if (file === undefined || context.args.length > 1) throw usage('engram eval retrieval needs exactly one data file.', 'Write e.g. `engram eval retrieval ../shared/bench/locomo10.eval.json --run /tmp/run.jsonl`.')
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
    const at = (path: string): string => (isAbsolute(path) ? path : resolve(context.io.cwd, path))
    const dataset = loadEvalDataset(at(file))
    const fd = openSync(at(runPath), 'w')
    let questions: EvaluatedQuestion[]
    try {
      questions = await runRetrievalEval(dataset, {
        conversations,
        settings,
        onLine: (line) => writeSync(fd, `${JSON.stringify(line)}\n`),
        onProgress: (message) => context.io.stderr.write(`${message}\n`),
      })
    } finally {
      closeSync(fd)
    }
    const engram = summariseByCategory(questions.map((q) => ({ category: q.category, metrics: q.engram })))
    const bm25 = summariseByCategory(questions.map((q) => ({ category: q.category, metrics: q.bm25 })))
    const table = formatMetricsTable([
      { name: 'engram', rows: engram },
      { name: 'bm25', rows: bm25 },
    ])
    return {
      data: { dataset: dataset.name, run: at(runPath), questions: questions.length, engram, bm25 },
      human: `${dataset.name}: ${questions.length} questions; run file ${at(runPath)}\n\n${table}\n`,
    }
  },
}
