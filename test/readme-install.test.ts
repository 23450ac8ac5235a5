// @slow: builds and packs the package, installs it with npm into an empty app and runs the README there
/**
 * The README as a newcomer follows it, against the packed package (issue 29): the package is built
 * (what `npm run build` runs, into a temp folder so the checkout's `dist/` is left alone), packed
 * with `npm pack` and installed with `npm install <tarball>` into an empty app, its dependencies
 * from the registry as the user's npm reaches it (with a cache of the test's own). Then, in that app:
 *
 *  - the quick start under "## Add it to an app" runs as written, on Node (the one running this
 *    test), and prints what the README says it prints;
 *  - the MCP configuration under "## MCP" is launched as written with the official MCP client: its
 *    `command` is the installed package's `engram` bin, found on the PATH (as a global install puts
 *    it there), and only the example home becomes the quick start's home — so the memory the quick
 *    start added for ada is what the client finds.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const root = resolve(import.meta.dirname, '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const dir = mkdtempSync(join(tmpdir(), 'engram-readme-install-'))
const app = join(dir, 'app')
const home = join(dir, 'home')
/** npm and the engram bin run on this Node (engram needs >= 22.13), the app's bins first as a global install's would be. */
const PATH = [join(app, 'node_modules/.bin'), dirname(process.execPath), process.env.PATH ?? ''].join(delimiter)
/** What the quick start and the MCP server run with: a home of the test's own. */
const env = { PATH, HOME: join(dir, 'user-home'), ENGRAM_HOME: home }
/** npm keeps the user's environment (their .npmrc: registry, proxy), with a cache of its own. */
const npmEnv = { ...process.env, PATH }
after(() => rmSync(dir, { recursive: true, force: true }))

/** The body of the first ``` block of `lang` in the README's section `heading`. */
function blockUnder(heading: string, lang: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`)
  assert.notEqual(start, -1, `the README has a section "${heading}"`)
  const section = readme.slice(start + 1).split(/\n## /)[0]!
  const body = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(section)?.[1]
  assert.ok(body !== undefined, `"${heading}" has a ${lang} block`)
  return body
}

describe('the README, followed in an empty app that installed the packed package', () => {
  before(() => {
    const pkg = join(dir, 'package')
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), '--outDir', join(pkg, 'dist')], { stdio: 'pipe' })
    for (const name of ['package.json', 'README.md', 'resources']) cpSync(join(root, name), join(pkg, name), { recursive: true })
    const packed = JSON.parse(execFileSync('npm', ['pack', pkg, '--json', '--pack-destination', dir], { cwd: dir, env: npmEnv, encoding: 'utf8' })) as Array<{ filename: string }>
    mkdirSync(app)
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'readme-app', private: true, type: 'module' })}\n`)
    execFileSync('npm', ['install', join(dir, packed[0]!.filename), '--no-audit', '--no-fund', '--loglevel=error', '--cache', join(dir, 'npm-cache')], { cwd: app, env: npmEnv, stdio: 'pipe', timeout: 240_000 })
  })

  test('the quick start runs as written and prints what the README says', () => {
    const quickStart = blockUnder('Add it to an app', 'ts')
    assert.ok(quickStart.split('\n').filter((line) => line.trim() !== '').length < 10, 'under ten lines')
    const said = /```\n\nIt prints `([^`]+)`/.exec(readme.slice(readme.indexOf(quickStart)))?.[1]
    assert.ok(said !== undefined, 'the README says what the quick start prints')
    writeFileSync(join(app, 'quickstart.ts'), quickStart)
    const printed = execFileSync(process.execPath, ['quickstart.ts'], { cwd: app, env, encoding: 'utf8' })
    assert.equal(printed.trim(), said)
  })

  test("the MCP configuration starts the installed engram on its home, for its user, and finds what the quick start added", async () => {
    const parsed = JSON.parse(blockUnder('MCP', 'json')) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> }
    const config = parsed.mcpServers.engram!
    assert.equal(config.env.ENGRAM_HOME, '/Users/you/.engram', 'the home is given in env')
    const transport = new StdioClientTransport({ command: config.command, args: config.args, env: { ...config.env, ...env }, cwd: dir, stderr: 'pipe' })
    let stderr = ''
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    const client = new Client({ name: 'engram-readme-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const { tools } = await client.listTools()
      assert.deepEqual(tools.map((tool) => tool.name).sort(), ['forget_memory', 'memorize', 'read_memory_file', 'recall_skill', 'search_memory', 'write_memory_file'])
      const found = (await client.callTool({ name: 'search_memory', arguments: { query: 'green tea' } })) as { structuredContent?: Record<string, unknown> }
      assert.match(String(found.structuredContent?.result), /prefers green tea to coffee/)
      assert.match(client.getInstructions() ?? '', /in conversations with ada/)
    } finally {
      await client.close()
    }
    assert.ok(stderr.includes(`engram mcp: serving agent default from ${home} for user ada`), stderr)
  })
})
