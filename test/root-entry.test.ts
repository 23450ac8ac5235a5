/**
 * `import 'engram'` loads the library alone (decision 0039): the build's `dist/index.js` and every
 * module it imports statically, walked file by file, reach no command line, MCP, HTTP server or
 * evaluation module and none of their packages; those live behind `engram/cli`, `engram/mcp` and
 * the `engram` binary. The walk follows `import … from` and `export … from`, not `import()`,
 * which loads only when called (the optional `pg`, the model providers).
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { after, before, test } from 'node:test'

const root = resolve(import.meta.dirname, '..')
const FOREIGN_PACKAGES = ['@modelcontextprotocol/sdk', 'hono', '@hono/node-server', 'croner', 'pg', 'playwright-core']
const FOREIGN_FOLDERS = ['interfaces/', 'eval/']

let out = ''
before(() => {
  out = mkdtempSync(join(tmpdir(), 'engram-dist-'))
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), '--outDir', out], { cwd: root, stdio: 'pipe' })
})
after(() => rmSync(out, { recursive: true, force: true }))

/** Every module `entry` loads statically: files of the build (relative to it) and packages, each with the first file that imports it. */
function staticImports(entry: string): { files: string[]; packages: Map<string, string> } {
  const seen = new Set<string>()
  const packages = new Map<string, string>()
  const stack = [join(out, entry)]
  while (stack.length > 0) {
    const file = stack.pop() as string
    if (seen.has(file)) continue
    seen.add(file)
    for (const match of readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\s+(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm)) {
      const specifier = match[1] as string
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier)
        assert.ok(existsSync(target), `${relative(out, file)} imports ${specifier}, which the build does not have`)
        stack.push(target)
      } else if (!specifier.startsWith('node:')) {
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] as string)
        if (!packages.has(name)) packages.set(name, relative(out, file))
      }
    }
  }
  return { files: [...seen].map((file) => relative(out, file)), packages }
}

test('the root entry loads the library alone: no CLI, MCP, HTTP or eval module, none of their packages', () => {
  const { files, packages } = staticImports('index.js')
  const foreign = files.filter((file) => FOREIGN_FOLDERS.some((folder) => file.startsWith(folder)))
  assert.deepEqual(foreign, [], `dist/index.js reaches ${foreign.join(', ')}`)
  const foreignPackages = FOREIGN_PACKAGES.filter((name) => packages.has(name)).map((name) => `${name} (from ${packages.get(name)})`)
  assert.deepEqual(foreignPackages, [], `dist/index.js loads ${foreignPackages.join(', ')}`)
  // What it does load is the library: the session API and the stores.
  for (const file of ['mind.js', 'session/session.js', 'storage/embedded.js']) assert.ok(files.includes(file), `dist/index.js does not reach ${file}`)
})

test('the command line is its own entry, engram/cli, as the binary is', async () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { default: string }>; bin: Record<string, string> }
  assert.equal(manifest.exports['./cli']?.default, './dist/cli.js')
  assert.ok(existsSync(join(out, 'cli.js')))
  assert.ok(existsSync(join(out, manifest.bin.engram?.replace('./dist/', '') ?? 'missing')))
  const cli = (await import(join(root, 'src/cli.ts'))) as { runCli?: unknown }
  assert.equal(typeof cli.runCli, 'function')
  const library = (await import(join(root, 'src/index.ts'))) as Record<string, unknown>
  assert.equal(library.runCli, undefined)
})
