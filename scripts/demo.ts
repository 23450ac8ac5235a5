/**
 * `npm run demo`: what engram does, on the embedded default (SQLite + markdown files in a local
 * home, no API key, no LLM). A few simulated days of an agent's life, then a look inside.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { join, resolve } from 'node:path'
import { ManualClock } from '../src/core/clock.ts'
import { hasCompactor, hasExplorer } from '../src/memory/context/provider.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { renderStatus } from '../src/interfaces/cli/commands/status/index.ts'
import { colourFor, makeStyle } from '../src/interfaces/cli/format.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'

const root = resolve(import.meta.dirname, '..')
const home = join(root, '.demo', 'home')
const project = join(root, '.demo', 'project')
const tty = Boolean(process.stdout.isTTY)
// Colour as the command line decides it: on a terminal, not with NO_COLOR (decision 0074).
const colour = colourFor({ isTTY: tty, env: process.env })
const { bold, dim } = makeStyle(colour)
let chapterNo = 0
const chapter = (title: string) => console.log(`\n${bold(`── ${++chapterNo}. ${title} ${'─'.repeat(Math.max(0, 62 - title.length))}`)}`)
const show = (label: string, text: string, max = 30) => {
  const lines = text.trimEnd().split('\n')
  console.log(dim(label))
  for (const line of lines.slice(0, max)) console.log(`  ${line}`)
  if (lines.length > max) console.log(dim(`  … ${lines.length - max} more lines`))
}

// A clean demo home every run, inside the repository (ignored by git), never ~/.engram.
rmSync(join(root, '.demo'), { recursive: true, force: true })
const env = { HOME: join(root, '.demo', 'user-home'), PATH: process.env.PATH }
const clock = new ManualClock('2026-03-02T09:00:00Z')

console.log(bold('engram — long-term memory for LLM agents'))
console.log(dim(`demo home: ${home}   (no API key, no server: SQLite + markdown files; simulated clock)`))

const mind = await openMindInternals({ home, project, env, clock })
console.log(`agent "${mind.agent}": storage ${mind.backend.name}, full-text ${mind.backend.capabilities.fullText}, vectors ${mind.backend.capabilities.vectors}`)
console.log(`LLM: ${mind.llm.available ? mind.llm.provider : 'none — offline paths, their output marked as such'}; embedder: ${mind.embedder?.id ?? 'none'}`)

/** One turn of a scripted agent: the "model" is a canned reply; tools run through the session. */
async function turn(m: MindInternals, sessionId: string, message: string, reply: string, tool?: { name: string; input: unknown }) {
  const session = m.session(sessionId, { user: 'ada' })
  const t = await session.begin(message)
  if (tool) await session.execute(tool.name, tool.input)
  await session.end(t, reply)
  await m.idle()
  return t
}

// Ada's memories are hers: they live in her own folder and reach only her sessions (decision 0017).
const adaDir = join(mind.layout.usersDir, 'ada')

chapter('Day 1 — a conversation; the agent memorizes what matters')
await mind.memory.profiles.replace('ada', '# Ada\n\n- Lead engineer on the billing service\n- Prefers short answers\n')
await turn(mind, 'mon', 'Hi! I am Ada. The invoice export to accounting failed again last night.', 'Looking into it.')
clock.advance(120_000)
await turn(mind, 'mon', 'It returned HTTP 429 after about 50 requests.', 'The billing API rate-limits at ~50 requests/minute; I will batch the calls.', {
  name: 'memorize',
  input: { entries: [{ text: 'The billing API rate-limits at about 50 requests per minute', kind: 'lesson', topic: 'billing-api' }, { text: 'Batch calls to the billing API', kind: 'always' }] },
})
clock.advance(120_000)
await turn(mind, 'mon', 'Great, batching fixed it.\nresolved: invoice export failing', 'Glad it works now.')
show('agents/default/users/ada/memory/lessons.md  (Ada\'s own: only her sessions see it)', readFileSync(join(adaDir, 'memory', 'lessons.md'), 'utf8'))
show('agents/default/users/ada/memory/rules.md', readFileSync(join(adaDir, 'memory', 'rules.md'), 'utf8'))

chapter('Between sessions — immediate encoding at the idle boundary')
clock.advance(15 * 60_000)
const maintenance = await mind.maintain()
console.log(`session boundaries: ${maintenance.boundaries.map((b) => `${b.kind}${'session' in b ? ` (${b.session})` : ''}`).join(', ')}`)
show('agents/default/users/ada/episodes/2026-03-02.md', readFileSync(join(adaDir, 'episodes', '2026-03-02.md'), 'utf8'), 14)
show('shared/resolutions.jsonl', readFileSync(join(home, 'shared', 'resolutions.jsonl'), 'utf8'), 3)

chapter('Day 2 — other work')
clock.advanceDays(1)
for (const [message, reply] of [
  ['Can you outline the Q2 hiring plan?', 'Here is an outline: roles, timeline, budget.'],
  ['Move the budget section to the end.', 'Moved.'],
  ['Add a note that interviews start in May.', 'Added.'],
]) await turn(mind, 'tue', message as string, reply as string)

chapter('Day 3 — a new question; engram recalls before the model is called')
clock.advanceDays(1)
await mind.maintain()
const day3 = mind.session('wed', { user: 'ada' })
const t = await day3.begin('The accounting export is failing with 429 errors again — what did we do last time?')
console.log(`message type: ${t.type}; priming budget ${t.budgets.priming.budget} tokens, used ${t.budgets.priming.tokens}`)
show('primed memory (part of turn.system)', t.systemParts.primed, 24)
console.log(dim('why each memory was injected (provenance, score terms):'))
for (const item of t.provenance.primed.slice(0, 6)) {
  const why = Object.entries(item.why).map(([k, v]) => `${k}=${v}`).join(' ')
  console.log(`  [${item.channel}] ${item.kind} from ${item.id} — ${why}`)
}
for (const note of t.provenance.degraded ?? []) console.log(`  degraded, once for the prompt: ${note.reason} (${note.memories.length} memories)`)
console.log(`system prompt: ${t.system.length} chars in parts ${Object.entries(t.systemParts).filter(([, v]) => v !== '').map(([k]) => k).join(' → ')}`)
console.log(`conversation handed to the model: ${t.messages.length} message(s); tools: ${t.tools.map((x) => x.name).join(', ')}`)
await day3.end(t, 'Last time the billing API rate limit (about 50 requests/minute) caused it; batching the calls fixed it.')
await mind.idle()
const stored = await mind.turnProvenance({ sessionId: 'wed', turn: t.number })
console.log(`stored with the turn, for "why did the agent know that?" later: ${stored?.provenance.primed.length ?? 0} injected memories (mind.turnProvenance)`)

chapter('Another user — private memory per user')
const bob = mind.session('bob-chat', { user: 'bob' })
const b = await bob.begin('What do you know about the accounting export and its 429 errors?')
const leaked = /rate-limit|50 requests|Batch calls|Ada/.test(b.system + JSON.stringify(b.messages))
console.log(`bob asks the same question: ${leaked ? 'LEAK — Ada\'s memories reached bob' : 'none of Ada\'s memories, episodes or messages reach his prompt'}`)
const search = await b.tools.find((tool) => tool.name === 'search_memory')?.execute({ query: 'billing API rate limit' })
console.log(`bob's search_memory "billing API rate limit" → ${search?.text.split('\n')[0]}`)
const forbidden = await b.tools.find((tool) => tool.name === 'read_memory_file')?.execute({ path: 'users/ada/memory/lessons.md' })
console.log(`bob's read_memory_file users/ada/memory/lessons.md → ${forbidden?.text.split('\n')[0]}`)
await bob.end(b, 'I have nothing on that yet.')
await mind.idle()

chapter('The memory API — for a host that manages memory itself')
// mind.memories (decision 0065): add from a conversation (the user's own statements, offline by
// rules; decision 0066), search, update and delete by id — for one user, never another's.
const added = await mind.memories.add({ user: 'cleo', messages: [{ role: 'user', content: 'I live in Lisbon. I prefer green tea to coffee. Can you suggest a café?' }, { role: 'assistant', content: 'I like the one by the river.' }] })
for (const change of added.results) console.log(`  ${change.event} ${change.kind} "${change.text}" (${added.method}) ${dim(change.id ?? '')}`)
const [tea] = await mind.memories.search('green tea or coffee', { user: 'cleo' })
console.log(`cleo's search "green tea or coffee" → "${tea?.text}"; ada's → ${(await mind.memories.search('green tea or coffee', { user: 'ada' })).filter((m) => m.owner === 'user:cleo').length} of cleo's`)
await mind.memories.add({ user: 'cleo', messages: [{ role: 'user', content: 'I moved to Porto last month.' }] })
console.log(`cleo says she moved: ${(await mind.memories.getAll({ user: 'cleo', kinds: ['profile'] })).memories.map((m) => `"${m.text}"`).join(', ')} (the later place replaces the earlier)`)
if (tea?.id) console.log(`delete by id → ${(await mind.memories.delete(tea.id, { user: 'cleo' })).action} (archived, restorable; purge: true erases)`)

chapter('A user–assistant chat — what the user said, and facts that change')
// The agent's long answers mention everything; the user's own words are the evidence. A fact
// restated later with a new value ranks first, and the old statement stays findable.
const answer = (topic: string) => `Here is a careful plan for ${topic}. ${Array.from({ length: 8 }, (_, i) => `Step ${i + 1}: check the PostgreSQL staging database, its extensions, its backups and the upgrade notes before you go on.`).join(' ')}`
for (const [message, reply] of [
  ['Our staging database runs PostgreSQL 14 and I want to upgrade it. How should I plan that?', answer('a PostgreSQL upgrade')],
  ['Always include the exact psql commands when I ask about database maintenance.', 'Understood: exact psql commands from now on.'],
  ['We upgraded the staging database to PostgreSQL 16 last week. How do I check its extensions?', answer('checking extensions after the upgrade')],
]) {
  clock.advanceDays(1)
  await turn(mind, `chat-${clock.now().getDate()}`, message as string, reply as string)
}
const chat = mind.session('chat-q', { user: 'ada' })
const q = await chat.begin('Quick check before tonight\'s maintenance window.')
const versions = await q.tools.find((tool) => tool.name === 'search_memory')?.execute({ query: 'PostgreSQL version staging database', limit: 4 })
show('search_memory "PostgreSQL version staging database" (newest statement first, the agent\'s long answers after)', versions?.text ?? '', 12)
await chat.end(q, 'Staging runs PostgreSQL 16 since last week (it ran 14 before).')
await mind.idle()

chapter('Lossless working memory — a long conversation folds into summaries')
const long = { sessionId: 'long-chat', agent: mind.agent, user: 'ada' }
for (let i = 0; i < 60; i++) {
  clock.advance(60_000)
  await mind.context.append(long, [
    { role: 'user', content: `Step ${i}: we checked invoice batch ${i}; it had ${i * 3} line items and ${i % 4} corrections.` },
    { role: 'assistant', content: `Noted batch ${i}. The totals match the ledger after ${i % 4} corrections.` },
  ])
}
if (hasCompactor(mind.context)) {
  const result = await mind.context.compact(long, { mode: 'full' })
  if (result.kind === 'compacted') console.log(`compaction: ${result.leafSummaries} leaf + ${result.condensedSummaries} condensed summaries, ${result.tokensBefore} → ${result.tokensAfter} tokens, methods ${JSON.stringify(result.methods)} (degraded: ${result.degraded})`)
  else console.log(`compaction skipped: ${result.reason}`)
}
const assembled = await mind.context.assemble(long, 1200, 6)
console.log(`assembled within 1200 tokens: ${assembled.items.length} items, ${assembled.tokens} tokens, standing for ${new Set(assembled.items.flatMap((i) => i.messageIds)).size} of 120 messages`)
const summary = assembled.items.find((i) => i.kind === 'summary')
if (summary) {
  show('the oldest item (a summary, marked as not LLM-written)', summary.content, 6)
  if (hasExplorer(mind.context) && summary.summaryId) {
    const expansion = await mind.context.expand(mind.agent, summary.summaryId, { toMessages: true, limit: 3 })
    console.log(dim(`expand ${summary.summaryId} → back to the original messages:`))
    for (const node of expansion.nodes) console.log(`  ${JSON.stringify(node).slice(0, 110)}`)
  }
}

chapter('Hand edits are memories too')
const lessonsFile = join(adaDir, 'memory', 'lessons.md')
appendFileSync(lessonsFile, '- Invoices are archived to cold storage after 18 months <!-- topic:billing-api ts:2026-03-02 -->\nthis line is not a memory entry\n')
const report = await mind.reindex()
console.log(`appended by hand, then reindexed: ${report.added} added, ${report.unchanged} unchanged, ${report.ms} ms`)
for (const problem of report.problems) console.log(`kept and reported: ${problem.file.replace(`${home}/`, '')}:${problem.line} — ${problem.reason}`)
const found = await mind.retriever.search('when are invoices archived', { limit: 1, viewer: { agent: mind.agent, user: 'ada' } })
console.log(`search "when are invoices archived" → ${found.hits.map((h) => `[${h.unit.kind}] ${h.unit.text}`).join('') || '(nothing)'}`)
const episodes = await mind.scope('ada').recall('invoice export 429', { daysBack: 7 })
console.log(`recall "invoice export 429" (episodes and activity, 7 days) → ${episodes.length} results; best: ${episodes[0]?.ref ?? '-'}`)

chapter('A night of consolidation — what the days taught')
// Two notes that say the same thing, and one with another figure: weekly integration merges the
// first two (the numbers and names agree) and never the third.
const notes = mind.session('notes', { user: 'ada' })
const noted = await notes.begin('Please keep these notes about the kitchen project.')
const writeNote = noted.tools.find((tool) => tool.name === 'write_memory_file')
for (const [path, content] of [
  ['knowledge/kitchen-budget.md', '# Kitchen budget\n\nThe kitchen renovation budget is 40k, approved by Marta.\n'],
  ['knowledge/renovation-budget.md', '# Renovation budget\n\nThe budget for the kitchen renovation is 40k, approved by Marta.\n'],
  ['knowledge/bathroom-budget.md', '# Bathroom budget\n\nThe bathroom renovation budget is 30k, approved by Marta.\n'],
]) await writeNote?.execute({ path, content })
await notes.end(noted, 'Saved.')
clock.advance(30 * 60_000)
await mind.maintain()
const daily = await mind.consolidate('daily')
console.log(`engram consolidate daily, offline: frontmatter migrated ${daily.migrated.length}; low-activity ${daily.lowActivity.length}`)
for (const pending of daily.knowledge.pending.slice(0, 2)) console.log(`  pending: ${pending.step} — ${pending.reason} (${pending.waiting} episode sections wait)`)
const weekly = await mind.consolidate('weekly')
for (const merged of weekly.merged) console.log(`engram consolidate weekly: merged ${merged.merged.join(', ')} → ${merged.survivor} (${merged.method}: ${merged.why})`)
console.log('  users/ada/knowledge/bathroom-budget.md stays apart: 30k is not 40k')

// The same night with a model configured. Here a scripted stand-in on loopback answers as a model
// would (engram/test's fake OpenAI-compatible server) — configure llm.provider for a real one.
const { startFakeOpenAiServer } = await import('../src/testing/fake-openai-server.ts')
const stand = await startFakeOpenAiServer({
  onChat: (request) => {
    const name = (request.body as { response_format?: { json_schema?: { name?: string } } }).response_format?.json_schema?.name
    const text = JSON.stringify(request.body)
    if (name === 'knowledge') {
      const items = []
      if (/PostgreSQL 16/.test(text)) items.push({ title: 'Staging database', content: 'The staging database runs PostgreSQL 16 since the upgrade.', sources: [1] })
      else if (/PostgreSQL 14/.test(text)) items.push({ title: 'Staging database', content: 'The staging database runs PostgreSQL 14.', sources: [1] })
      if (text.includes('HTTP 429 after about 50 requests')) {
        items.push({ title: 'Billing API rate limit', content: 'The billing API answers HTTP 429 after about 50 requests; batching the calls fixed the invoice export.', sources: [1] })
        items.push({ title: 'Billing API quota', content: 'The billing API allows 5000 requests a day.', sources: [1] })
      }
      return { json: { items } }
    }
    if (name === 'knowledge_check') return { json: { supported: true, reason: 'stated in the episode' } }
    if (name === 'contradiction') return /PostgreSQL 14/.test(text) && /PostgreSQL 16/.test(text) ? { json: { relation: 'contradiction', strategy: 'supersede', reason: 'the database was upgraded' } } : { json: { relation: 'unrelated', reason: 'different things' } }
    if (name === 'procedures') return { json: { procedures: [] } }
    if (name === 'reconsolidation') return { json: { update: false, reason: 'still true' } }
    return { json: { content: 'merged' } }
  },
})
const night = await openMindInternals({ home, project, env, clock, settings: { 'llm.provider': 'openai-compatible', 'llm.baseUrl': stand.url, 'llm.model': 'scripted-stand-in', 'jobs.eager': false } })
const learned = await night.consolidate('daily')
const k = learned.knowledge
console.log(`engram consolidate daily, with a model: ${k.sections} episode sections; ${k.calls} model calls, ${k.tokens} tokens`)
for (const item of k.learned) console.log(`  learned ${item.path} (confidence ${item.confidence}, validated against ${item.sources.length} episode section(s))`)
for (const item of k.rejected) console.log(`  rejected "${item.title}": ${item.why}`)
for (const item of k.contradictions) console.log(`  ${item.strategy}: ${item.old} → ${item.new} (${item.why})`)
const superseded = k.contradictions.find((item) => item.strategy === 'supersede')
if (superseded) {
  const history = await night.history(superseded.old.replace(/^users\/ada\//, ''), { user: 'ada' })
  console.log(`engram history ${superseded.old} --user ada → valid ${history.validity?.from?.slice(0, 10) ?? '?'} – ${history.validity?.until?.slice(0, 10) ?? 'now'}; superseded by ${history.supersededBy?.map((link) => link.path).join(', ')}; still searchable, ranked below its successor`)
}
await night.close()
await stand.close()
await mind.reindex()

chapter('Months later — forgetting what stopped mattering')
// Two notes written on day 1: one recalled now and then, one never again.
await mind.backend.owned('user:ada').documents.write('knowledge', 'office-wifi', { created_at: '2026-03-02T10:00:00Z' }, '# Office wifi\nThe guest wifi password rotates every Monday.\n')
await mind.backend.owned('user:ada').documents.write('knowledge', 'billing-retries', { created_at: '2026-03-02T10:00:00Z' }, '# Billing API retries\nRetry a 429 from the billing API after 60 seconds.\n')
await mind.reindex()
for (const days of [60, 60]) {
  clock.advanceDays(days)
  const check = mind.session(`check-${days}-${clock.now().getMonth()}`, { user: 'ada' })
  const ct = await check.begin('How long should we wait before retrying a 429 from the billing API?')
  await check.end(ct, 'About 60 seconds.')
}
clock.advanceDays(40)
const dry = await mind.consolidate('monthly', { dryRun: true })
console.log(`engram consolidate monthly --dry-run: would forget ${dry.forgotten.map((f) => `${f.path} (${f.why})`).join(', ') || 'nothing'}; protected ${dry.protected}, active ${dry.active}`)
const month = await mind.maintain()
const forgetting = month.jobs.find((job) => job.kind === 'consolidation-monthly')
const wifiArchived = existsSync(join(adaDir, 'archive', 'forgotten', 'knowledge', 'office-wifi.md'))
console.log(`the month's first maintain(): consolidation-monthly ${forgetting?.status ?? 'not due'} ${JSON.stringify(forgetting?.result ?? {})}`)
console.log(`  users/ada/knowledge/office-wifi.md → ${wifiArchived ? 'users/ada/archive/forgotten/knowledge/office-wifi.md (recorded in Ada\'s own activity log, with why)' : 'still live'}`)
console.log(`  users/ada/knowledge/billing-retries.md → ${(await mind.backend.owned('user:ada').documents.read('knowledge', 'billing-retries')) ? 'kept: it was recalled' : '(gone!)'}`)
if (wifiArchived) {
  await mind.restore('knowledge/office-wifi.md', { user: 'ada' })
  console.log('engram restore knowledge/office-wifi.md --user ada → back in the live tree and the index')
}

chapter('engram status')
console.log(renderStatus(await mind.status(), colour))
await mind.close()

chapter('Markdown is an export — the whole memory as files, and back')
{
  const cli = async (args: string[]): Promise<Record<string, unknown>> => {
    const printed: string[] = []
    await runCli([...args, '--json'], { stdout: { write: (text: string) => printed.push(text) }, stderr: process.stderr, env, cwd: root, isTTY: false })
    return (JSON.parse(printed.join('').trim().split('\n').pop() ?? '{}') as { data?: Record<string, unknown> }).data ?? {}
  }
  const exported = join(root, '.demo', 'export')
  const second = join(root, '.demo', 'second-home')
  const again = join(root, '.demo', 'export-of-second-home')
  const first = (await cli(['export', exported, '--home', home])) as { written?: string[] }
  const files = (first.written ?? []).filter((file) => file !== 'manifest.json' && file !== 'README.md')
  const notExported = ((first as { problems?: Array<{ path: string; line: number }> }).problems ?? []).map((problem) => `${problem.path}:${problem.line}`)
  console.log(`engram export .demo/export: ${files.length} memory files — every owner's rules, lessons, topics, knowledge, procedures, episodes, profiles and skills, as the home lays them out`)
  await cli(['import', 'engram', exported, '--home', second])
  await cli(['export', again, '--home', second])
  const same = files.filter((file) => existsSync(join(again, file)) && readFileSync(join(again, file), 'utf8') === readFileSync(join(exported, file), 'utf8'))
  if (notExported.length > 0) console.log(dim(`  not exported, and said so in its README: ${notExported.join(', ')} (the hand-edited line engram could not read)`))
  console.log(`engram import engram .demo/export into a second home, then its export: ${same.length} of ${files.length} memory files byte-identical`)
  console.log(dim('the same tree comes out of PostgreSQL: engram migrate --to postgres://… moves a home into a database (ENGRAM_DATABASE_URL), docs/scale-out.md'))
}

chapter('engram doctor')
const out: string[] = []
await runCli(['doctor', '--home', home, '--human'], { stdout: { write: (text: string) => out.push(text) }, stderr: process.stderr, env: { ...env, NO_COLOR: colour ? '' : '1' }, cwd: root, isTTY: tty })
console.log(out.join('').trimEnd())

chapter('The dashboard — engram serve')
{
  // The real server on the demo home: on a terminal it keeps serving until Ctrl-C; otherwise (CI,
  // a pipe) it shows that the dashboard answers, prints its address and stops.
  const interactive = tty && Boolean(process.stdin.isTTY)
  // An administrator's token for this run, so the dashboard shows every user (without tokens it
  // shows the agent's own memory only, decision 0051).
  const admin = randomBytes(24).toString('base64url')
  const server = spawn(process.execPath, [join(root, 'src/interfaces/cli/bin.ts'), 'serve', '--home', home, '--port', interactive ? '7477' : '0', '--json'], { env: { ...env, ENGRAM_LOG_LEVEL: 'warn', ENGRAM_SERVE_TOKENS: `${admin}=admin` }, stdio: ['ignore', 'pipe', 'inherit'] })
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: server.stdout })
    lines.once('line', resolve)
    server.once('exit', (code) => reject(new Error(`engram serve exited with ${code} before listening (is port 7477 taken? run it with --port 0)`)))
  })
  const { listening } = JSON.parse(first) as { listening: string }
  const dashboard = `${listening}/?token=${admin}`
  // Open the address as a browser would: the token becomes a session of this server at its own
  // place (the 303's Location), then the pages answer there.
  const opened = await fetch(dashboard, { redirect: 'manual' })
  const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const place = (opened.headers.get('location') ?? '/').replace(/\/$/, '')
  const pages = ['/', '/memories', '/why?message=why+does+the+invoice+export+fail', '/conversations', '/activity', '/archive', '/confirmations']
  const answered: string[] = []
  for (const path of pages) {
    const response = await fetch(`${listening}${place}${path}`, { headers: { cookie } })
    answered.push(`${path.split('?')[0]} ${response.status}`)
  }
  // A program calls the API with the token itself, as a bearer.
  const search = (await (await fetch(`${listening}/v1/search?query=billing+rate+limit&user=ada`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { hits?: Array<{ text: string }> }
  console.log(`engram serve --home .demo/home: the HTTP API, MCP at /mcp, and the dashboard: ${answered.join(', ')}`)
  console.log(`GET /v1/search?query=billing+rate+limit&user=ada → ${search.hits?.[0]?.text ?? '(nothing)'}`)
  console.log(`\n${bold(`dashboard: ${dashboard}`)}`)
  if (interactive) {
    console.log(dim('open it in a browser; Ctrl-C stops the server'))
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => server.kill('SIGTERM'))
      server.once('exit', () => resolve())
    })
  } else {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
    console.log(dim(`(not a terminal, so the server stopped; serve it yourself: npm run engram -- serve --home ${home})`))
  }
}

console.log(`\n${dim(`Look around: ${home}  (try: npm run engram -- status --home ${home}; engram mcp serves it to an MCP client)`)}`)
