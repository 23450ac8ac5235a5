/**
 * Runs the memory fuzzer (memory-fuzz.ts) in child processes under a watchdog: each child fuzzes
 * its share of the homes and reports every step; a child that reports nothing for `stallMs` is
 * killed, and its home counted as a hang (with the step it hung in and the seed that replays it).
 * `npm test` runs a short run (test/memory-fuzz.test.ts), the robustness bench a long one.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { VARIANT_KINDS, type VariantKind } from './memory-fuzz.ts'

const WORKER = fileURLToPath(new URL('./memory-fuzz-worker.ts', import.meta.url))

export interface FuzzRunOptions {
  /** Seed of the first home; home n has seed `seed + n`. */
  seed: number
  homes: number
  variantsPerHome: number
  /** Child processes fuzzing at once. */
  workers: number
  /** `memory.maxFileBytes` of every home. */
  maxFileBytes: number
  /** A child silent for this long is hung. Generous: a slow machine is not a hang. */
  stallMs: number
}

export interface FuzzFailure {
  seed: number
  /** What failed: an operation that threw, a check, or a hang. */
  failure: string
  variants: Array<{ kind: VariantKind; path: string; mode: string }>
}

export interface FuzzRunReport {
  homes: number
  variants: number
  byKind: Record<VariantKind, number>
  opens: number
  failures: FuzzFailure[]
  hangs: number
  ms: number
}

interface HomeLine {
  type: 'home'
  seed: number
  variants: FuzzFailure['variants']
  opens: number
  failures: string[]
  ms: number
}

/** Fuzzes `seeds` in one child at a time, respawning past a hung home; resolves when all are done. */
async function runSlot(seeds: number[], options: FuzzRunOptions, report: FuzzRunReport): Promise<void> {
  let queue = [...seeds]
  while (queue.length > 0) {
    const done = new Set<number>()
    let current: { seed: number; step: string } | undefined
    const child = spawn(process.execPath, [WORKER, JSON.stringify({ seeds: queue, variants: options.variantsPerHome, maxFileBytes: options.maxFileBytes })], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let timer: NodeJS.Timeout | undefined
    let hung = false
    const arm = (): void => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        hung = true
        child.kill('SIGKILL')
      }, options.stallMs)
    }
    arm()
    let pending = ''
    child.stdout.on('data', (chunk: Buffer) => {
      arm()
      pending += chunk.toString('utf8')
      let end = pending.indexOf('\n')
      while (end >= 0) {
        const line = JSON.parse(pending.slice(0, end)) as { type: 'step'; seed: number; step: string } | HomeLine
        pending = pending.slice(end + 1)
        end = pending.indexOf('\n')
        if (line.type === 'step') {
          current = { seed: line.seed, step: line.step }
          continue
        }
        done.add(line.seed)
        report.homes++
        report.variants += line.variants.length
        for (const variant of line.variants) report.byKind[variant.kind]++
        report.opens += line.opens
        for (const failure of line.failures) report.failures.push({ seed: line.seed, failure, variants: line.variants })
      }
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000)
    })
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    clearTimeout(timer)
    const left = queue.filter((seed) => !done.has(seed))
    if (left.length === 0) break
    // The child hung or died in the middle of a home: that home fails, the rest get a new child.
    const seed = current?.seed ?? (left[0] as number)
    report.homes++
    if (hung) report.hangs++
    report.failures.push({
      seed,
      failure: hung ? `hang: no progress for ${options.stallMs} ms in step "${current?.step ?? 'start'}"` : `the fuzzing process died (exit ${code}) in step "${current?.step ?? 'start'}": ${stderr.trim().slice(-1500)}`,
      variants: [],
    })
    queue = left.filter((other) => other !== seed)
  }
}

/** Fuzzes `options.homes` homes; never throws for what a home does (its failures are in the report). */
export async function runMemoryFuzz(options: FuzzRunOptions): Promise<FuzzRunReport> {
  const started = performance.now()
  const report: FuzzRunReport = {
    homes: 0,
    variants: 0,
    byKind: Object.fromEntries(VARIANT_KINDS.map((kind) => [kind, 0])) as Record<VariantKind, number>,
    opens: 0,
    failures: [],
    hangs: 0,
    ms: 0,
  }
  const slots: number[][] = Array.from({ length: Math.max(1, options.workers) }, () => [])
  for (let n = 0; n < options.homes; n++) slots[n % slots.length]?.push(options.seed + n)
  await Promise.all(slots.map((seeds) => runSlot(seeds, options, report)))
  report.ms = Math.round(performance.now() - started)
  return report
}
