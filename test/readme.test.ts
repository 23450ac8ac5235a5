// @slow: builds the package, installs it in a temp project and type-checks the README there
/**
 * The README's code type-checks against the built package, as a user's project would see it:
 * the package is built with the project's own tsconfig (what `npm run build` runs, into a temp
 * folder so the checkout's `dist/` is left alone), installed as `node_modules/engram` beside the
 * project's dependencies, and every ```ts block of the README is compiled there with `tsc`.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'

const root = resolve(import.meta.dirname, '..')
const tsc = join(root, 'node_modules/typescript/bin/tsc')
const project = mkdtempSync(join(tmpdir(), 'engram-readme-'))
after(() => rmSync(project, { recursive: true, force: true }))

function run(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [tsc, ...args], { encoding: 'utf8' })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

test("the README's code compiles against the built package", () => {
  const blocks = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
  assert.ok(blocks.length >= 2, 'the explicit loop and the middleware')
  const all = blocks.join('\n')
  for (const shown of ['messages: turn.messages', 'tools: toAiSdkTools(turn.tools)', 'session.end(turn, result.responseMessages)', 'engramMiddleware({ mind, sessionId', 'middleware: memory })']) {
    if (!all.includes(shown)) assert.fail(`the README shows ${shown}`)
  }

  const modules = join(project, 'node_modules')
  const engram = join(modules, 'engram')
  const build = run(['-p', join(root, 'tsconfig.json'), '--outDir', join(engram, 'dist')])
  assert.equal(build.status, 0, build.output)
  copyFileSync(join(root, 'package.json'), join(engram, 'package.json'))
  // The user's project has engram's dependencies installed beside it (and @ai-sdk/openai, which the README uses).
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (name.startsWith('.') || name === 'engram') continue
    symlinkSync(join(root, 'node_modules', name), join(modules, name))
  }

  const snippets = join(project, 'src')
  mkdirSync(snippets)
  for (const [i, block] of blocks.entries()) writeFileSync(join(snippets, `readme-${i + 1}.ts`), block)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'es2023', lib: ['es2023'], module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
      include: ['src'],
    }),
  )
  const check = run(['-p', join(project, 'tsconfig.json')])
  assert.equal(check.status, 0, `README code blocks do not type-check against the built package:\n${check.output}`)
})
