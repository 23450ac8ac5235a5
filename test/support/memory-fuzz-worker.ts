/**
 * A child process of the memory fuzzer (memory-fuzz-run.ts): fuzzes the homes of the seeds it is
 * given, one after the other, and reports each step and each home as a JSON line on stdout, so
 * that the parent can tell a hang (no line for a while) from slow work and name the step it hung in.
 *
 * Usage: node memory-fuzz-worker.ts '{"seeds":[1,2,3],"variants":8,"maxFileBytes":65536}'
 */
import { fuzzHome } from './memory-fuzz.ts'

const { seeds, variants, maxFileBytes } = JSON.parse(process.argv[2] ?? '{}') as { seeds: number[]; variants: number; maxFileBytes: number }
const say = (line: object): void => {
  process.stdout.write(`${JSON.stringify(line)}\n`)
}
for (const seed of seeds) {
  const outcome = await fuzzHome({ seed, variants, maxFileBytes, step: (step) => say({ type: 'step', seed, step }) })
  say({ type: 'home', ...outcome })
}
// A mind left something open (a timer, a handle): the work is done and reported.
process.exit(0)
