/**
 * The layer check of `npm run lint` (scripts/check-layers.ts, decision 0061): it passes on src/ as
 * it stands, and on a small tree of its own it reports each kind of broken rule with file and line
 * — through the command `run.sh` runs, exit code and stderr included.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { checkLayers } from '../scripts/check-layers.ts'

const root = resolve(import.meta.dirname, '..')
const fixture = mkdtempSync(join(tmpdir(), 'engram-layers-'))
after(() => {
  rmSync(fixture, { recursive: true, force: true })
})

function write(path: string, text: string): void {
  const file = join(fixture, 'src', path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

/** Runs the checker as `scripts/run.sh lint` does. */
function runChecker(at: string): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [join(root, 'scripts/check-layers.ts'), at], { encoding: 'utf8' })
  return { status: run.status, stderr: run.stderr }
}

test('src/ holds to the layers', () => {
  assert.deepEqual(checkLayers(root), [])
  const run = runChecker(root)
  assert.equal(run.status, 0, run.stderr)
  assert.equal(run.stderr, '')
})

test('an upward import, static or dynamic, a side step between storage and llm, and memory reaching a concrete backend are each reported with file and line', () => {
  write('core/clock.ts', 'export const now = (): number => Date.now()\n')
  write('memory/recall.ts', "import { now } from '../core/clock.ts'\nexport const recall = (): number => now()\n")
  // Upward: storage → memory, a type-only import (a type is a dependency too).
  write('storage/plan.ts', "// import { nothing } from '../mind.ts' — quoted in a comment, not an import\nimport type { recall } from '../memory/recall.ts'\nexport type Plan = typeof recall\n")
  // Upward through import(): tools → mind; and an `import('…')` type.
  write('tools/agent.ts', "export async function load(): Promise<unknown> {\n  const text = \"import x from '../mind.ts'\"\n  return [text, await import('../mind.ts')]\n}\nexport type Host = import('../interfaces/app.ts').App\n")
  write('mind.ts', "import { load } from './tools/agent.ts'\nexport const mind = load\n")
  write('interfaces/app.ts', 'export type App = string\n')
  // Side by side: llm → storage.
  write('llm/model.ts', "export type { Plan } from '../storage/plan.ts'\n")
  // memory → a concrete backend.
  write('memory/write.ts', "import { atomic } from '../storage/files/atomic-write.ts'\nexport const write = atomic\n")
  write('storage/files/atomic-write.ts', 'export const atomic = (): void => {}\n')
  // Test code is not checked.
  write('memory/test-support/child.ts', "import { mind } from '../../mind.ts'\nexport const child = mind\n")
  write('storage/plan.test.ts', "import { mind } from '../mind.ts'\nvoid mind\n")

  const found = checkLayers(fixture).map((problem) => `${problem.where} ${problem.message}`)
  const expect = (where: string, rule: RegExp): void => {
    assert.ok(
      found.some((line) => line.startsWith(`${where} `) && rule.test(line)),
      `expected ${where} ${rule}, got:\n${found.join('\n')}`,
    )
  }
  expect('src/storage/plan.ts:2', /storage → memory \(memory\/recall\.ts\): an import runs up the layers/)
  expect('src/tools/agent.ts:3', /tools → mind \(mind\.ts\): an import runs up the layers/)
  expect('src/tools/agent.ts:5', /tools → interfaces \(interfaces\/app\.ts\)/)
  expect('src/llm/model.ts:1', /llm → storage .*side by side/)
  expect('src/memory/write.ts:1', /memory → storage\/files\/atomic-write\.ts: a memory system never imports a concrete backend/)
  // The allow-list of concrete-backend imports is empty (decision 0059): nothing of it is reported.
  assert.ok(!found.some((line) => line.startsWith('scripts/check-layers.ts CONCRETE_BACKEND_ALLOWED lists')))
  const layerProblems = found.filter((line) => line.startsWith('src/'))
  assert.equal(layerProblems.length, 5, layerProblems.join('\n'))

  const run = runChecker(fixture)
  assert.equal(run.status, 1)
  assert.match(run.stderr, /^src\/tools\/agent\.ts:3: tools → mind/m)
  assert.match(run.stderr, /import(s)? against the layers/)
})

test('a folder of src/ in no layer is reported rather than passed over', () => {
  write('widgets/widget.ts', 'export const widget = 1\n')
  const found = checkLayers(fixture)
  assert.ok(found.some((problem) => problem.where === 'src/widgets/widget.ts' && /in no layer/.test(problem.message)))
})
