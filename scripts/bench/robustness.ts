/**
 * Benchmark: what nothing anyone sends may do to engram (decisions 0025–0028), each part beside a simple
 * baseline measured in the same run. Run: `npm run bench -- robustness [--only fuzz,bounded,contention]`
 * (each part also runs on its own: `npm run bench -- robustness/<part>`).
 *
 * - fuzz: random, truncated, binary, CR-only, BOM, oversized and special-file variants written into
 *   every memory folder; every open, status, reindex, turn and maintain must complete.
 * - bounded: a 10 MB message with and without spaces, a 1 MB turn; the delay of SIGTERM meanwhile.
 * - contention: many processes memorizing at once; a lock holder killed with SIGKILL.
 * - slow-clients: 200 trickling connections of one client at `engram serve` (decision 0056).
 * - migrate-kill: `engram migrate --to postgres://…` killed with SIGKILL, each time run again (PostgreSQL: add `--backend postgres`).
 * - consolidation-kills: consolidation killed with SIGKILL, recovered byte for byte (decision 0053).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const PARTS = ['fuzz', 'bounded', 'contention', 'slow-clients', 'migrate-kill', 'consolidation-kills'] as const

const { values } = parseArgs({ options: { only: { type: 'string' } }, allowPositionals: true, strict: false })
const wanted = typeof values.only === 'string' ? values.only.split(',').map((part) => part.trim()) : [...PARTS]

for (const part of PARTS) {
  if (!wanted.includes(part)) continue
  const file = join(import.meta.dirname, 'robustness', `${part}.ts`)
  if (!existsSync(file)) {
    console.log(`## ${part}\n\n(not built yet)\n`)
    continue
  }
  const module = (await import(file)) as { run(options?: Record<string, unknown>): Promise<string> }
  const started = performance.now()
  const table = await module.run({})
  console.log(`## ${part} (${((performance.now() - started) / 1000).toFixed(1)} s)\n\n${table.trim()}\n`)
}
