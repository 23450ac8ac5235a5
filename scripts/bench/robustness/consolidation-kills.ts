/**
 * Benchmark (decision 0053): consolidation killed with SIGKILL at random points,
 * then run again in a fresh process; the recovered home against an unkilled run's, byte for byte.
 * The scenario, the child and what is compared are those of test/consolidation-kill.test.ts
 * (src/memory/consolidation/test-support/consolidation-kills.ts): daily (extraction, validation,
 * supersession, distillation, reconsolidation) then weekly (duplicate merge, contradiction scan,
 * episode compression: decision 0085),
 * two users, the fake model server, a fixed instant. Baseline, same run: the unkilled run.
 *
 * Run on its own: `node scripts/bench/robustness/consolidation-kills.ts [--kills 30] [--seed N]`
 * (through `scripts/run.sh node …`); `npm run bench -- robustness` runs it with the others.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { consolidationModel, runKillTrials } from '../../../src/memory/consolidation/test-support/consolidation-kills.ts'
import { startFakeOpenAiServer } from '../../../src/testing/fake-openai-server.ts'

export interface ConsolidationKillBenchOptions {
  /** SIGKILLs (default 30). */
  kills?: number
  /** Seed of the kill points (default 1). */
  seed?: number
}

export async function run(options: ConsolidationKillBenchOptions = {}): Promise<string> {
  const kills = options.kills ?? 30
  const seed = options.seed ?? 1
  const root = mkdtempSync(join(tmpdir(), 'engram-bench-consolidation-kills-'))
  const server = await startFakeOpenAiServer({ onChat: consolidationModel })
  try {
    const env = { HOME: join(root, 'user-home'), PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' }
    const started = performance.now()
    const result = await runKillTrials({ dir: join(root, 'homes'), env, url: server.url, kills, seed })
    const seconds = (performance.now() - started) / 1000
    const count = (left: string) => result.trials.filter((trial) => trial.leftAt === left).length
    const equal = result.trials.filter((trial) => trial.differ.length === 0 && trial.recoveryCode === 0).length
    const differing = result.trials.filter((trial) => trial.differ.length > 0)
    const files = new Set(differing.flatMap((trial) => trial.differ))
    return [
      `Consolidation (daily then weekly, two users, fake model, fixed instant) in a child process killed with SIGKILL, then run again in a fresh process; the home compared with an unkilled run's byte for byte (every file; not the SQLite databases and lock files). Seed ${seed}, Node ${process.version}.`,
      '',
      '| run | kills | left untouched | left half-written | left complete | child done before its kill | recovered byte for byte | differing | files that differed |',
      '|---|---|---|---|---|---|---|---|---|',
      `| kill, then recovery run | ${kills} | ${count('untouched')} | ${count('partial')} | ${count('complete')} | ${count('not-killed')} | ${equal} | ${differing.length} | ${files.size === 0 ? '—' : [...files].slice(0, 6).join(', ')} |`,
      `| baseline: the unkilled run | — | — | — | — | — | — | — | ${result.written} files written in ${result.unkilledMs} ms of consolidation |`,
      '',
      `Total ${seconds.toFixed(0)} s (${(seconds / Math.max(1, kills)).toFixed(1)} s a trial: two processes opening the home).`,
    ].join('\n')
  } finally {
    await server.close()
    rmSync(root, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { kills: { type: 'string' }, seed: { type: 'string' } } })
  console.log(await run({ ...(values.kills ? { kills: Number(values.kills) } : {}), ...(values.seed ? { seed: Number(values.seed) } : {}) }))
}
