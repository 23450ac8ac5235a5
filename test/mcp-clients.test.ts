/**
 * Every client configuration in docs/mcp-clients.md (and the one in the README), started as
 * written with the official MCP client: the JSON blocks (`mcpServers` and VS Code's `servers`) and
 * the `claude mcp add` lines.
 * Two things are mapped, nothing else: `engram …` runs this checkout's bin (as
 * the other tests launch `engram mcp`), and the doc's example home and the HTTP address become a
 * temp home and the test's own `engram serve`. The client passes the configuration's `env` over
 * its own minimal environment, as MCP clients do; the example home reaching the server through
 * `env` is what the start-up line on stderr proves.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
const EXAMPLE_HOME = '/Users/you/.engram'
const ESSENTIAL = ['memorize', 'search_memory', 'read_memory_file', 'write_memory_file', 'forget_memory', 'recall_skill']

type ServerConfig = { type?: string; command?: string; args?: string[]; env?: Record<string, string>; url?: string }
interface Configuration {
  /** Where it is in the doc: the heading above it. */
  under: string
  config: ServerConfig
}

/** The configurations of the doc, under the heading each is written under. */
function configurationsOf(markdown: string): Configuration[] {
  const found: Configuration[] = []
  let under = ''
  for (const [, heading, lang, body] of markdown.matchAll(/^## (.+)$|^```(json|sh)\n([\s\S]*?)^```$/gm)) {
    if (heading !== undefined) {
      under = heading
      continue
    }
    if (lang === 'json') {
      const parsed = JSON.parse(body!) as { mcpServers?: Record<string, ServerConfig>; servers?: Record<string, ServerConfig> }
      for (const config of Object.values(parsed.mcpServers ?? parsed.servers ?? {})) found.push({ under, config })
      continue
    }
    for (const line of body!.split('\n').filter((text) => text.startsWith('claude mcp add '))) found.push({ under, config: claudeMcpAdd(line) })
  }
  return found
}

/** `claude mcp add [--transport http] [--env K=V]… NAME (URL | -- COMMAND ARGS…)` as the server it adds. */
function claudeMcpAdd(line: string): ServerConfig {
  const words = line.split(/\s+/).slice(3)
  const dashes = words.indexOf('--')
  const options = dashes === -1 ? words : words.slice(0, dashes)
  const env: Record<string, string> = {}
  let transport = 'stdio'
  const positional: string[] = []
  for (let i = 0; i < options.length; i++) {
    if (options[i] === '--env') {
      const [key, ...value] = options[++i]!.split('=')
      env[key!] = value.join('=')
    } else if (options[i] === '--transport') transport = options[++i]!
    else positional.push(options[i]!)
  }
  if (transport === 'http') return { type: 'http', url: positional[1]! }
  const [command, ...args] = words.slice(dashes + 1)
  return { command: command!, args, env }
}

/** `engram …` (the command a global install of the packed package puts on PATH) as this checkout's bin. */
function engramArgs(config: ServerConfig): string[] {
  assert.equal(config.command, 'engram', 'the configurations name the installed engram command (the package is not on the registry yet)')
  return config.args ?? []
}

/** The client connected to the configuration's `engram mcp`, and what the server wrote to stderr so far. */
async function launch(config: ServerConfig, env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, ...engramArgs(config)], env, cwd: root, stderr: 'pipe' })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const client = new Client({ name: 'engram-doc-test', version: '1.0.0' })
  await client.connect(transport)
  return { client, stderr: () => stderr }
}

async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools()
  assert.deepEqual(tools.map((tool) => tool.name), ESSENTIAL)
  const saved = await client.callTool({ name: 'memorize', arguments: { entries: [{ text: 'Ada keeps the boat keys in the blue tin', kind: 'lesson', topic: 'boat' }] } })
  assert.equal(saved.isError, undefined, JSON.stringify(saved.content))
  const found = (await client.callTool({ name: 'search_memory', arguments: { query: 'boat keys' } })) as { structuredContent?: Record<string, unknown> }
  assert.match(String(found.structuredContent?.result), /blue tin/)
}

describe('the client configurations in docs/mcp-clients.md, as written', () => {
  const configurations = configurationsOf(readFileSync(join(root, 'docs/mcp-clients.md'), 'utf8'))
  const temps: TempHome[] = []
  let serve: ServeProcess | undefined

  before(async () => {
    const temp = makeTempHome('engram-mcp-clients-serve-')
    temps.push(temp)
    serve = await startServe({ home: temp.home, env: temp.env })
  })
  after(async () => {
    await serve?.stop()
    for (const temp of temps) temp.cleanup()
  })

  test('the doc has the clients it names: Claude Code (command and .mcp.json), Claude Desktop, Cursor, VS Code, and HTTP', () => {
    const stdio = configurations.filter((item) => item.config.command !== undefined).map((item) => item.under)
    assert.deepEqual(stdio, ['Claude Code', 'Claude Code', 'Claude Desktop', 'Cursor', 'VS Code'])
    assert.equal(configurations.filter((item) => item.config.url !== undefined).length, 2)
    const vscode = configurations.find((item) => item.under === 'VS Code')
    assert.equal(vscode?.config.type, 'stdio', 'VS Code needs a type')
  })

  /** Starts `config` as written (twice, on a temp home): the tools answer, and the server names the home and the user on stderr. */
  async function startsAsWritten(under: string, config: ServerConfig): Promise<void> {
    const temp = makeTempHome('engram-mcp-clients-')
    temps.push(temp)
    assert.equal(config.env?.ENGRAM_HOME, EXAMPLE_HOME, `${under}: the home is given in env`)
    const env = { ...config.env, ENGRAM_HOME: temp.home, HOME: temp.env.HOME!, ENGRAM_EMBED_MODEL: temp.env.ENGRAM_EMBED_MODEL! }
    const first = await launch(config, env)
    try {
      await exercise(first.client)
      assert.ok(first.stderr().includes(`engram mcp: new empty home at ${temp.home} (agent default)`), `${under}: ${first.stderr()}`)
      assert.match(first.client.getInstructions() ?? '', /in conversations with ada/, under)
    } finally {
      await first.client.close()
    }
    // Started again on the same home, it is no longer new: it says which memory it serves.
    const again = await launch(config, env)
    await again.client.close()
    const second = again.stderr()
    assert.ok(second.includes(`engram mcp: serving agent default from ${temp.home} for user ada`), `${under}: ${second}`)
  }

  test('each stdio configuration starts engram mcp on the home its env names, for its user; the tools answer', async () => {
    for (const { under, config } of configurations.filter((item) => item.config.command !== undefined)) await startsAsWritten(under, config)
  })

  test("the README's configuration starts engram mcp the same way", async () => {
    const inReadme = configurationsOf(readFileSync(join(root, 'README.md'), 'utf8')).filter((item) => item.config.command !== undefined)
    assert.deepEqual(inReadme.map((item) => item.under), ['MCP'])
    for (const { under, config } of inReadme) await startsAsWritten(`README: ${under}`, config)
  })

  test('each HTTP configuration reaches /mcp on engram serve; without tokens it says it acts for the agent alone', async () => {
    for (const { under, config } of configurations.filter((item) => item.config.url !== undefined)) {
      const url = new URL(config.url!)
      assert.equal(url.origin, 'http://127.0.0.1:7477', under)
      const client = new Client({ name: 'engram-doc-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(url.pathname, serve!.address)))
      try {
        await exercise(client)
        assert.match(client.getInstructions() ?? '', /acts for the agent alone \(no user\)/, under)
      } finally {
        await client.close()
      }
    }
  })
})
