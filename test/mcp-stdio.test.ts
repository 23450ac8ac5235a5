/**
 * `engram mcp` driven end to end by the official MCP client over stdio, as an MCP host runs it:
 * a real child process, a temp home, and nothing on stdout but JSON-RPC.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

type CallResult = { content: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown> }

function textOf(result: CallResult): string {
  return result.content.map((part) => part.text ?? '').join('\n')
}

describe('engram mcp over stdio', () => {
  let temp: TempHome
  let client: Client
  let transport: StdioClientTransport
  const protocolErrors: Error[] = []
  let stderr = ''

  before(async () => {
    temp = makeTempHome('engram-mcp-stdio-')
    mkdirSync(temp.home, { recursive: true })
    writeFileSync(join(temp.home, '..', 'outside-secret.txt'), 'do not leak\n')
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', '--home', temp.home],
      env: temp.env,
      cwd: root,
      stderr: 'pipe',
    })
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    client = new Client({ name: 'engram-test', version: '1.0.0' })
    // Any stdout line that is not JSON-RPC surfaces here (the transport cannot parse it).
    client.onerror = (error) => protocolErrors.push(error)
    await client.connect(transport)
  })

  after(() => {
    temp.cleanup()
  })

  test('names its home on stderr, saying it is new and empty (stdout is the protocol)', () => {
    assert.match(stderr, new RegExp(`engram mcp: new empty home at ${temp.home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(agent default\\); if you meant another, set ENGRAM_HOME in your client's config`))
  })

  test('lists one tool per question, each with a title, annotations and an output schema, descriptions 1,500 characters at most', async () => {
    const { tools } = await client.listTools()
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['memorize', 'search_memory', 'read_memory_file', 'write_memory_file', 'forget_memory', 'recall_skill'],
    )
    const sizes = tools.map((tool) => `${tool.name} ${(tool.description ?? '').length}`)
    const total = tools.reduce((sum, tool) => sum + (tool.description ?? '').length, 0)
    console.log(`MCP tool descriptions: ${sizes.join(', ')}; total ${total} characters`)
    assert.ok(total <= 1500, `descriptions total ${total} characters`)
    for (const tool of tools) {
      assert.ok(tool.title, tool.name)
      assert.equal(tool.outputSchema?.type, 'object', tool.name)
      assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', tool.name)
      assert.equal(tool.annotations?.openWorldHint, false, tool.name)
      if (tool.annotations?.readOnlyHint === false) {
        assert.equal(typeof tool.annotations.destructiveHint, 'boolean', tool.name)
        assert.equal(typeof tool.annotations.idempotentHint, 'boolean', tool.name)
      }
      assert.equal(tool.inputSchema.type, 'object', tool.name)
      assert.ok((tool.description ?? '').length > 20, tool.name)
    }
  })

  test('memorizes, then searches and finds it, then reads the memory file it names', async () => {
    const saved = (await client.callTool({
      name: 'memorize',
      arguments: { entries: [{ text: 'The staging deploy key lives in vault path ops/staging-deploy', kind: 'lesson', topic: 'deploy' }] },
    })) as CallResult
    assert.equal(saved.isError, undefined, textOf(saved))
    assert.match(textOf(saved), /saved \[lesson, global\] The staging deploy key/)

    const found = (await client.callTool({ name: 'search_memory', arguments: { query: 'staging deploy key' } })) as CallResult
    assert.equal(found.isError, undefined, textOf(found))
    assert.match(textOf(found), /The staging deploy key lives in vault path ops\/staging-deploy/)
    assert.match(textOf(found), /source: memory\/lessons\.md/)
    // Structured as the output schema says (the client checked it): the hits, and the text under "result".
    assert.equal(found.structuredContent?.result, textOf(found))
    assert.ok(Array.isArray(found.structuredContent?.hits))

    const read = (await client.callTool({ name: 'read_memory_file', arguments: { path: 'memory/lessons.md' } })) as CallResult
    assert.equal(read.isError, undefined, textOf(read))
    assert.match(textOf(read), /^memory\/lessons\.md — lines 1-\d+ of \d+/)
    assert.match(textOf(read), /ops\/staging-deploy/)
  })

  test('path traversal through read_memory_file and write_memory_file is refused', async () => {
    const knowledge = join(temp.home, 'agents', 'default', 'knowledge')
    symlinkSync(join(temp.home, '..', 'outside-secret.txt'), join(knowledge, 'link-out.md'))
    for (const path of ['../../etc/passwd', '/etc/passwd', 'knowledge/../../../../outside-secret.txt', 'knowledge/link-out.md']) {
      const read = (await client.callTool({ name: 'read_memory_file', arguments: { path } })) as CallResult
      assert.equal(read.isError, true, `read ${path}: ${textOf(read)}`)
      assert.equal(read.structuredContent?.code, 'path_outside_memory', `read ${path}`)
      assert.match(textOf(read), /Refused path[\s\S]*Fix: /)
      assert.doesNotMatch(textOf(read), /do not leak|root:/)

      const write = (await client.callTool({ name: 'write_memory_file', arguments: { path, content: 'pwned' } })) as CallResult
      assert.equal(write.isError, true, `write ${path}: ${textOf(write)}`)
      assert.equal(write.structuredContent?.code, 'path_outside_memory', `write ${path}`)
    }
    const escaped = (await client.callTool({ name: 'write_memory_file', arguments: { path: '../../escaped.md', content: 'pwned' } })) as CallResult
    assert.equal(escaped.structuredContent?.code, 'path_outside_memory')
    assert.equal(existsSync(join(temp.home, '..', 'escaped.md')), false)
    assert.equal(readFileSync(join(temp.home, '..', 'outside-secret.txt'), 'utf8'), 'do not leak\n')
  })

  test('memory files are resources, and primed_context recalls what is related to a message', async () => {
    const { resources } = await client.listResources()
    const lessons = resources.find((resource) => resource.uri === 'engram://memory/memory/lessons.md')
    assert.ok(lessons, resources.map((resource) => resource.uri).join(', '))
    assert.equal(lessons.mimeType, 'text/markdown')
    assert.ok(!resources.some((resource) => resource.uri.includes('link-out')), 'a link leading outside is not listed')
    const content = await client.readResource({ uri: lessons.uri })
    assert.match(String((content.contents[0] as { text?: string }).text), /ops\/staging-deploy/)
    await assert.rejects(client.readResource({ uri: 'engram://memory/..%2F..%2Fetc%2Fpasswd' }), /Refused path/)

    // The memory files as a template a client fills in with a path, then reads.
    const { resourceTemplates } = await client.listResourceTemplates()
    assert.deepEqual(resourceTemplates.map((template) => template.uriTemplate), ['engram://memory/{+path}'])
    const filled = resourceTemplates[0]!.uriTemplate.replace('{+path}', 'memory/lessons.md')
    assert.match(String(((await client.readResource({ uri: filled })).contents[0] as { text?: string }).text), /ops\/staging-deploy/)

    const prompt = await client.getPrompt({ name: 'primed_context', arguments: { message: 'where is the staging deploy key?' } })
    const text = String((prompt.messages[0]?.content as { text?: string } | undefined)?.text)
    assert.match(text, /## Your memory — recalled for this message[\s\S]*### Related memories/)
    assert.match(text, /ops\/staging-deploy/)
  })

  test('closing stdin ends the server promptly; stdout carried nothing but JSON-RPC', async () => {
    const started = performance.now()
    await client.close()
    // Under 2 s means the process exited on stdin's end, not on the transport's SIGTERM fallback.
    assert.ok(performance.now() - started < 1900, `closed after ${Math.round(performance.now() - started)} ms`)
    assert.deepEqual(protocolErrors.map((error) => error.message), [])
    assert.match(stderr, /engram mcp: session ended \(stdin_closed\)/, 'the end of the session is told on stderr, not stdout')
  })
})
