/**
 * The memory-file fuzzer in `npm test` (decision 0025): seeded, about a minute, in child
 * processes under a watchdog so that a hang fails the test instead of blocking CI. Every memory
 * folder of every owner's tree gets random, truncated, binary, bare-CR, BOM, oversized, hostile and
 * special-file variants, several per home; createMind, status, reindex, a turn for a user and one
 * for the agent, and maintain must never throw or hang, every line that was in a memory file must
 * still be there after a later write, and nothing outside the home may reach engram.
 *
 * Longer: ENGRAM_FUZZ_VARIANTS=20000 npm test -- test/memory-fuzz.test.ts (or the robustness bench,
 * scripts/bench/robustness/fuzz.ts). A failure names its seed: ENGRAM_FUZZ_SEED=<seed>
 * ENGRAM_FUZZ_VARIANTS=10 replays that one home.
 */
import assert from 'node:assert/strict'
import { availableParallelism } from 'node:os'
import { test } from 'node:test'
import { runMemoryFuzz } from './support/memory-fuzz-run.ts'

const VARIANTS_PER_HOME = 10
const variants = Number(process.env.ENGRAM_FUZZ_VARIANTS ?? 1500)
const seed = Number(process.env.ENGRAM_FUZZ_SEED ?? 1)

test(`${variants} fuzzed memory-file variants (seed ${seed}): no throw, no hang, no line lost, nothing from outside the home`, async () => {
  const report = await runMemoryFuzz({
    seed,
    homes: Math.max(1, Math.ceil(variants / VARIANTS_PER_HOME)),
    variantsPerHome: Math.min(VARIANTS_PER_HOME, variants),
    workers: Math.min(2, availableParallelism()),
    // Small, so that oversized variants cost little to write; the limit is what is tested, not its size.
    maxFileBytes: 64 * 1024,
    // A watchdog, not a speed target: a home takes well under a second.
    stallMs: 120_000,
  })
  const shown = report.failures.slice(0, 10).map((failure) => `seed ${failure.seed}: ${failure.failure.slice(0, 1500)}\n  variants: ${JSON.stringify(failure.variants)}`)
  assert.equal(report.failures.length, 0, `${report.failures.length} failures in ${report.homes} homes:\n${shown.join('\n')}`)
  assert.equal(report.homes, Math.max(1, Math.ceil(variants / VARIANTS_PER_HOME)))
  for (const [kind, count] of Object.entries(report.byKind)) assert.ok(count > 0 || variants < 100, `no ${kind} variant was tried`)
})
