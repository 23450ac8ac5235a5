/**
 * Robustness benchmark, part "fuzz": the memory-file fuzzer of `npm test` (test/memory-fuzz.test.ts)
 * run long — tens of thousands of random, truncated, binary, bare-CR, BOM, oversized, hostile and
 * special-file variants written into every memory folder of every owner's tree, each home opened,
 * reported, reindexed, given a turn per viewer, maintained and written to again (decision 0025).
 * The figures are how many variants were tried, how many minds opened over them, how many homes
 * failed (a throw, a hang, a lost line, outside content inside engram) and how long it took.
 *
 * `run(options)` returns the markdown table (the robustness bench assembles its parts); on its own:
 * `node scripts/bench/robustness/fuzz.ts [--variants N] [--seed N] [--workers N] [--per-home N]`.
 */
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { runMemoryFuzz } from '../../../test/support/memory-fuzz-run.ts'

export interface FuzzBenchOptions {
  /** Variants in all (default 20,000). */
  variants?: number
  /** Seed of the first home (default 1). */
  seed?: number
  /** Variants written into each home before it is opened (default 25). */
  perHome?: number
  /** Child processes fuzzing at once (default: the machine's cores). */
  workers?: number
}

export async function run(options: FuzzBenchOptions = {}): Promise<string> {
  const variants = options.variants ?? 20_000
  const perHome = options.perHome ?? 25
  const workers = options.workers ?? availableParallelism()
  const seed = options.seed ?? 1
  const report = await runMemoryFuzz({ seed, homes: Math.ceil(variants / perHome), variantsPerHome: perHome, workers, maxFileBytes: 64 * 1024, stallMs: 120_000 })
  const seconds = report.ms / 1000
  const failed = new Set(report.failures.map((failure) => failure.seed)).size
  const lines = [
    `Memory-file fuzzer: ${report.homes} homes × ${perHome} variants, seed ${seed}, ${workers} worker processes, Node ${process.version}`,
    '',
    '| variants tried | homes | minds opened | homes failed (throw, lost line, leak) | hangs | time | variants/s |',
    '|---|---|---|---|---|---|---|',
    `| ${report.variants.toLocaleString('en')} | ${report.homes.toLocaleString('en')} | ${report.opens.toLocaleString('en')} | ${failed} | ${report.hangs} | ${seconds.toFixed(0)} s | ${(report.variants / seconds).toFixed(0)} |`,
    '',
    `Variants by kind: ${Object.entries(report.byKind).map(([kind, count]) => `${kind} ${count.toLocaleString('en')}`).join(', ')}.`,
  ]
  for (const failure of report.failures.slice(0, 5)) lines.push('', `- seed ${failure.seed}: ${failure.failure.split('\n')[0]}`)
  return lines.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { variants: { type: 'string' }, seed: { type: 'string' }, workers: { type: 'string' }, 'per-home': { type: 'string' } } })
  console.log(
    await run({
      ...(values.variants !== undefined ? { variants: Number(values.variants) } : {}),
      ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}),
      ...(values.workers !== undefined ? { workers: Number(values.workers) } : {}),
      ...(values['per-home'] !== undefined ? { perHome: Number(values['per-home']) } : {}),
    }),
  )
}
