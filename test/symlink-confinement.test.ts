/**
 * Symbolic links in memory folders (decision 0025): a link that leads out of its memory
 * folder is never read by anything — not the indexer, priming, the memory context, the working
 * state, recall, journal recovery, the file tools or MCP. Every memory folder of every owner's tree
 * gets one, each pointing at a file outside the home that holds a canary word; every read and
 * search path is then asked for it, and the database is searched byte by byte: 0 bytes of it may
 * be found. Links that stay inside their folder, and a whole folder linked elsewhere by its
 * owner's choice, keep working, as they do for read_memory_file (decision 0015).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { createMindMcpServer } from '../src/interfaces/mcp/mind-server.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { call, textOf } from './support/tool-calls.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

/** In every file outside the home; found anywhere, it is a leak. */
const CANARY = 'zanzibar'
/** In a file of a folder linked elsewhere on purpose: it must still be found. */
const LINKED_FOLDER_WORD = 'ocelot'
const DAY = new Date().toISOString().slice(0, 10)



/** Every regular file under `dir`, recursively; links are not followed. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(path) : entry.isFile() ? [path] : []
  })
}

/** Words of what the outside files say, without the canary: what a question or a search would use. */
const PROBE = 'password hunter2 notes mention lesson topic message reply issue'

describe('symbolic links leading out of a memory folder are never read', () => {
  let tmp: TempHome
  let outside: string
  let mind: Mind
  const links: string[] = []

  before(async () => {
    tmp = makeTempHome()
    outside = join(tmp.home, '..', 'outside')
    mkdirSync(outside, { recursive: true })
    const target = (name: string, text: string): string => {
      const path = join(outside, name)
      writeFileSync(path, text)
      return path
    }
    const markdown = target('notes.md', `---\ndescription: the ${CANARY} notes\n---\n# The ${CANARY} file\nThe ${CANARY} password is hunter2.\n`)
    const rules = target('rules.md', `# Rules\n\n## Always\n- Always mention the ${CANARY}\n`)
    const lessons = target('lessons.md', `# Lessons\n- The ${CANARY} lesson <!-- ts:${DAY} -->\n`)
    const profile = target('profile.md', `# Profile\n- Name: ${CANARY}\n`)
    const activity = target('activity.jsonl', `${JSON.stringify({ ts: `${DAY}T08:00:00.000Z`, type: 'message_received', content: `The ${CANARY} message`, from: 'u1' })}\n`)
    const journal = target('journal.jsonl', `${JSON.stringify({ type: 'start', at: `${DAY}T08:00:00.000Z`, sessionId: 'chat-u1', turn: 1 })}\n${JSON.stringify({ type: 'text', text: `The ${CANARY} reply` })}\n`)
    const resolutions = target('resolutions.jsonl', `${JSON.stringify({ id: 'x', ts: `${DAY}T08:00:00.000Z`, agent: 'default', issue: `the ${CANARY} issue`, session: 's', episode: 'e' })}\n`)
    const topics = join(outside, 'topics')
    mkdirSync(topics)
    writeFileSync(join(topics, 'secret.md'), `# Secret\n- The ${CANARY} topic\n`)
    const linkedFolder = join(outside, 'linked-procedures')
    mkdirSync(linkedFolder)
    writeFileSync(join(linkedFolder, 'feed.md'), `# Feeding\nFeed the ${LINKED_FOLDER_WORD} at dawn.\n`)

    const home = tmp.home
    const link = (to: string, at: string): void => {
      const path = join(home, at)
      mkdirSync(join(path, '..'), { recursive: true })
      symlinkSync(to, path)
      links.push(at)
    }
    for (const tree of ['agents/default', 'agents/default/users/u1', 'shared']) {
      link(markdown, `${tree}/knowledge/leak.md`)
      if (tree !== 'shared') link(markdown, `${tree}/procedures/leak.md`)
      link(rules, `${tree}/memory/rules.md`)
      link(lessons, `${tree}/memory/lessons.md`)
      if (tree !== 'agents/default/users/u1') link(markdown, `${tree}/memory/topics/leak.md`)
      if (tree !== 'shared') {
        link(profile, `${tree}/memory/profile.md`)
        link(markdown, `${tree}/episodes/${DAY}.md`)
        link(markdown, `${tree}/state/current_task.md`)
        link(activity, `${tree}/activity/${DAY}.jsonl`)
      }
    }
    link(topics, 'agents/default/users/u1/memory/topics') // a folder on the way that links out
    link(markdown, 'agents/default/SYSTEM.md')
    link(markdown, 'agents/default/SOUL.md')
    link(profile, 'shared/users/u1.md')
    link(resolutions, 'shared/resolutions.jsonl')
    link(journal, 'agents/default/journal/streams/dead-writer.jsonl')
    mkdirSync(join(home, 'agents/default/skills/leak'), { recursive: true })
    writeFileSync(join(home, 'agents/default/skills/leak/meta.json'), JSON.stringify({ name: 'leak', when_to_use: 'when asked about secrets' }))
    link(markdown, 'agents/default/skills/leak/declarative.md')
    mkdirSync(join(tmp.project, '.engram', 'memory'), { recursive: true })
    symlinkSync(rules, join(tmp.project, '.engram', 'memory', 'rules.md'))
    // Inside their folder: kept working.
    writeFileSync(join(home, 'agents/default/knowledge/tea.md'), '# Tea\nGreen tea is brewed at 80 degrees.\n')
    symlinkSync('tea.md', join(home, 'agents/default/knowledge/tea-alias.md'))
    // A whole folder linked elsewhere by its owner: its files are memory.
    symlinkSync(linkedFolder, join(home, 'shared/procedures'))

    mind = await createMind({ home, project: tmp.project, env: tmp.env, ignoreConfigFile: true })
  })

  after(async () => {
    await mind?.close()
    tmp?.cleanup()
  })

  test('the reindex reports each link out, and the index holds not one byte of what they point at', async () => {
    const report = await mind.reindex({ full: true })
    const reported = new Set(report.problems.filter((problem) => problem.reason === 'a symbolic link that leads outside its memory folder').map((problem) => problem.file))
    for (const at of links.filter((path) => /\.(md|jsonl)$/.test(path) && !/SYSTEM|SOUL|activity|journal|resolutions|state\/|skills\//.test(path))) {
      assert.ok(reported.has(at), `${at} reported (${[...reported].join(', ')})`)
    }
    assert.ok(report.problems.some((problem) => problem.file === 'agents/default/skills/leak' && /leads outside/.test(problem.reason)), 'the skill whose procedure links out')
    await mind.close()
    for (const file of filesUnder(tmp.home)) assert.ok(!readFileSync(file).includes(CANARY), `${file} holds the canary`)
    mind = await createMind({ home: tmp.home, project: tmp.project, env: tmp.env, ignoreConfigFile: true })
  })

  test('a turn, its tools and recall show none of it; links inside their folder still work', async () => {
    for (const user of [undefined, 'u1']) {
      const session = mind.session(`chat-${user ?? 'agent'}`, user === undefined ? {} : { user })
      const turn = await session.begin('What is the password in the notes? And how is green tea brewed?')
      const seen: string[] = [turn.system, JSON.stringify(turn.messages), JSON.stringify(turn.provenance), ...turn.warnings]
      for (const query of ['password hunter2', PROBE]) {
        seen.push((await call(turn.tools, 'search_memory', { query, limit: 50 })).text)
        seen.push((await call(turn.tools, 'recall', { query, days_back: 30 })).text)
        seen.push((await call(turn.tools, 'memory', { action: 'search', query })).text)
      }
      for (const path of links.filter((at) => at.startsWith('agents/default/') && !at.includes('/users/')).map((at) => at.slice('agents/default/'.length))) {
        const read = await call(turn.tools, 'read_memory_file', { path })
        seen.push(read.text)
      }
      seen.push(JSON.stringify(await mind.scope(user).recall(PROBE, { daysBack: 30 })))
      for (const text of seen) assert.ok(!text.includes(CANARY), text.slice(0, 2000))
      const tea = await call(turn.tools, 'search_memory', { query: 'green tea brewed degrees', limit: 10 })
      assert.match(tea.text, /knowledge\/tea-alias\.md|knowledge\/tea\.md/)
      assert.ok(turn.warnings.some((warning) => warning.includes('skipped') && warning.includes('leads outside')), turn.warnings.join('\n'))
      await session.end(turn, 'I do not know.')
    }
    const linked = await mind.retriever.search(`${LINKED_FOLDER_WORD} dawn`, { limit: 5, viewer: { agent: 'default' } })
    assert.ok(linked.hits.some((hit) => hit.unit.text.includes(LINKED_FOLDER_WORD)), 'a folder linked elsewhere as a whole is read')
  })

  test('MCP resources and primed_context show none of it', async () => {
    for (const user of [undefined, 'u1']) {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      const client = new Client({ name: 'confinement-test', version: '1.0.0' })
      await Promise.all([createMindMcpServer(mind, { session: { sessionId: `mcp-${user ?? 'agent'}`, ...(user === undefined ? {} : { user }) } }).connect(serverSide), client.connect(clientSide)])
      try {
        const seen: string[] = []
        const { resources } = await client.listResources()
        for (const resource of resources) {
          try {
            seen.push(JSON.stringify((await client.readResource({ uri: resource.uri })).contents))
          } catch (error) {
            seen.push(String(error))
          }
        }
        for (const at of links) {
          const path = at.replace(/^agents\/default\//, '').replace(/^shared\/users\//, 'users/')
          await client.readResource({ uri: `engram://memory/${path}` }).then(
            (read) => seen.push(JSON.stringify(read.contents)),
            (error: unknown) => seen.push(String(error)),
          )
        }
        const primed = await client.getPrompt({ name: 'primed_context', arguments: { message: `Tell me about the ${PROBE}.` } })
        seen.push(JSON.stringify(primed.messages))
        seen.push(textOf(await client.callTool({ name: 'search_memory', arguments: { query: PROBE, limit: 50 } })))
        for (const text of seen) assert.ok(!text.includes(CANARY), text.slice(0, 2000))
      } finally {
        await client.close()
      }
    }
  })

  test('the CLI shows none of it, and status names the links it skipped', async () => {
    const env = { ...tmp.env, ENGRAM_HOME: tmp.home }
    const outputs: string[] = []
    for (const args of [['status'], ['search', PROBE], ['recall', PROBE, '--days', '30'], ['memory', 'context'], ['doctor']]) {
      const result = await run(process.execPath, [bin, ...args, '--json'], { env, cwd: root, timeout: 60_000 }).catch((error: { stdout: string }) => error)
      outputs.push(result.stdout)
    }
    for (const output of outputs) assert.ok(!output.includes(CANARY), output.slice(0, 2000))
    const status = JSON.parse(outputs[0] as string) as { data: { problems: Array<{ file: string; reason: string }> } }
    assert.ok(status.data.problems.some((problem) => problem.file === 'agents/default/knowledge/leak.md' && problem.reason === 'a symbolic link that leads outside its memory folder'))
  })
})
