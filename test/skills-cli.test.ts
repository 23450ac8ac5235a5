/**
 * `engram skills …` end to end on a real temp home: the Command objects run as the CLI runs them,
 * against a mind opened from flags, with the LLM behind the fake OpenAI-compatible server.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { EngramError } from '../src/core/errors.ts'
import type { Command, CommandContext, CommandResult } from '../src/interfaces/cli/command.ts'
import { COMMANDS } from '../src/interfaces/cli/commands/index.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

let server: FakeOpenAiServer
before(async () => {
  server = await startFakeOpenAiServer()
})
after(() => server.close())

/** The command as the CLI's registry loads it. */
async function command(name: string): Promise<Command> {
  const entry = COMMANDS.find((c) => c.path.join(' ') === name)
  assert.ok(entry, name)
  return entry.load()
}

async function run(tmp: TempHome, name: string, args: string[] = [], options: CommandContext['options'] = {}, env: Record<string, string> = {}): Promise<CommandResult> {
  const out: string[] = []
  return (await command(name)).run({
    io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => {} }, env: { ...tmp.env, ...env }, cwd: tmp.project, isTTY: false },
    args,
    options,
    json: true,
    settings: { home: tmp.home },
  })
}

const llmEnv = () => ({ ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'planner', ENGRAM_LLM_MAX_RETRIES: '0' })

test('save --from a markdown file offline, list, show with a typo, remove to the archive', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const { mkdirSync } = await import('node:fs')
  mkdirSync(tmp.project, { recursive: true })
  writeFileSync(join(tmp.project, 'csv.md'), '# CSV Summary\n\nWhen to use: User asks to explore, summarize, or describe a CSV file.\n\n1. Load with pandas.\n2. describe().\n')
  const saved = await run(tmp, 'skills save', [], { from: 'csv.md' })
  const data = saved.data as { label: string; when_to_use: string }
  assert.equal(data.label, 'csv_summary')
  assert.equal(data.when_to_use, 'User asks to explore, summarize, or describe a CSV file.')
  const folder = join(tmp.home, 'agents', 'default', 'skills', 'csv_summary')
  assert.equal(readFileSync(join(folder, 'declarative.md'), 'utf8'), '# CSV Summary\n\n1. Load with pandas.\n2. describe().\n')
  assert.equal(JSON.parse(readFileSync(join(folder, 'meta.json'), 'utf8')).provenance.source, 'user')

  const again = await run(tmp, 'skills save', [], { from: 'csv.md' })
  assert.equal((again.data as { label: string }).label, 'csv_summary_2', 'a second save never overwrites the first')

  const list = await run(tmp, 'skills list')
  assert.deepEqual((list.data as { skills: Array<{ label: string }> }).skills.map((s) => s.label), ['csv_summary', 'csv_summary_2'])

  const show = await run(tmp, 'skills show', ['csv_sumary'])
  assert.equal((show.data as { label: string; resolvedFrom: string }).label, 'csv_summary')
  assert.equal((show.data as { resolvedFrom: string }).resolvedFrom, 'csv_sumary')
  assert.match(show.human, /1\. Load with pandas\./)

  await assert.rejects(run(tmp, 'skills remove', ['csv_sumary']), (e) => EngramError.is(e) && e.code === 'not_found' && /engram skills remove csv_summary/.test(e.fix ?? ''))
  assert.ok(existsSync(folder), 'a typo never removes anything')
  const removed = await run(tmp, 'skills remove', ['csv_summary_2'])
  assert.ok(existsSync((removed.data as { archivedTo: string }).archivedTo))
  assert.deepEqual(((await run(tmp, 'skills list')).data as { skills: Array<{ label: string }> }).skills.map((s) => s.label), ['csv_summary'])
})

test('save without --from and without an LLM is a clear error naming both fixes', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  await assert.rejects(run(tmp, 'skills save', ['csv summary']), (e) => EngramError.is(e) && e.code === 'llm_not_configured' && /--from FILE\.md/.test(e.fix ?? '') && /ENGRAM_LLM_PROVIDER/.test(e.fix ?? ''))
  const { mkdirSync } = await import('node:fs')
  mkdirSync(tmp.project, { recursive: true })
  writeFileSync(join(tmp.project, 'nocue.md'), '# Steps\n1. do it\n')
  await assert.rejects(run(tmp, 'skills save', [], { from: 'nocue.md' }), (e) => EngramError.is(e) && /When to use/.test(e.fix ?? ''))
  assert.ok(!existsSync(join(tmp.home, 'agents', 'default', 'skills', 'steps')))
})

test('save drafts a skill from recent activity with the LLM; a failed draft saves nothing', async (t) => {
  server.reset()
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const mind = await openMindInternals({ home: tmp.home, env: tmp.env, reindexOnOpen: false })
  await mind.backend.activity.append({ ts: '2026-04-11T10:00:00Z', type: 'message_received', content: 'Take a quick look at sales_q3.csv' })
  await mind.backend.activity.append({ ts: '2026-04-11T10:00:05Z', type: 'tool_use', tool: 'workspace', content: 'df = pd.read_csv("sales_q3.csv"); df.describe()' })
  await mind.backend.activity.append({ ts: '2026-04-11T10:00:09Z', type: 'response_sent', content: "Here's what I found..." })
  await mind.close()

  server.enqueue({ fail: { status: 500 } })
  await assert.rejects(run(tmp, 'skills save', ['csv summary'], {}, llmEnv()), (e) => EngramError.is(e) && e.code === 'llm_call_failed')
  server.enqueue({ json: { label: 'csv_summary' } })
  await assert.rejects(run(tmp, 'skills save', [], {}, llmEnv()), (e) => EngramError.is(e) && e.code === 'llm_invalid_output')
  assert.ok(!existsSync(join(tmp.home, 'agents', 'default', 'skills', 'csv_summary')))

  server.enqueue({
    json: {
      label: 'csv_summary',
      name: 'CSV Summary',
      when_to_use: 'User asks to explore, summarize, or describe a CSV file.',
      declarative_md: '1. Load the CSV with pandas.\n2. Infer the schema.\n3. Print describe() and plot distributions.',
    },
  })
  const saved = await run(tmp, 'skills save', ['csv summary'], {}, llmEnv())
  assert.equal((saved.data as { label: string }).label, 'csv_summary')
  const prompt = JSON.stringify(server.requests.at(-1)?.body)
  assert.match(prompt, /MSG<: Take a quick look at sales_q3\.csv\\n.*TOOL workspace: df = pd\.read_csv/)
  const meta = JSON.parse(readFileSync(join(tmp.home, 'agents', 'default', 'skills', 'csv_summary', 'meta.json'), 'utf8'))
  assert.equal(meta.provenance.source, 'llm')
  assert.equal(meta.provenance.model, 'planner')
})

test('save --user drafts from the work done with that user (their activity is logged in their tree)', async (t) => {
  server.reset()
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  // Work with Ada as a host does it: a session for her, a turn, a tool call, the reply.
  const mind = await openMindInternals({ home: tmp.home, env: tmp.env, reindexOnOpen: false })
  const session = mind.session('chat-ada', { user: 'ada' })
  const turn = await session.begin('Summarise the churn in customers_q3.csv for me')
  await session.execute('memorize', { entries: [{ text: 'customers_q3.csv has one row per account, churn in column "left"', kind: 'lesson' }] })
  await session.end(turn, 'Churn was 4.2% in Q3, mostly in the monthly plans.')
  await mind.idle()
  await mind.close()

  server.enqueue({
    json: {
      label: 'churn_summary',
      name: 'Churn summary',
      when_to_use: 'User asks for the churn in a customer export.',
      declarative_md: '1. Load the export.\n2. Count the accounts that left.\n3. Split by plan.',
    },
  })
  const saved = await run(tmp, 'skills save', [], { user: 'ada' }, llmEnv())
  assert.equal((saved.data as { label: string }).label, 'churn_summary')
  const prompt = JSON.stringify(server.requests.at(-1)?.body)
  assert.match(prompt, /Summarise the churn in customers_q3\.csv/)
  assert.match(prompt, /TOOL memorize/)
  assert.match(prompt, /Churn was 4\.2% in Q3/)
  const meta = JSON.parse(readFileSync(join(tmp.home, 'agents', 'default', 'skills', 'churn_summary', 'meta.json'), 'utf8'))
  assert.equal(meta.provenance.user, 'ada', 'the skill says whose work it was drafted from')
  // Without --user the agent's own log is read, and Ada's work is not in it.
  await assert.rejects(run(tmp, 'skills save', [], {}, llmEnv()), (e) => EngramError.is(e) && /no recent activity/.test(e.message))
})
