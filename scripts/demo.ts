/**
 * `npm run demo`: what engram holds and can do, on the embedded default (SQLite + markdown files
 * in a local home, no API key). Each capability adds a chapter.
 */
import { appendFileSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createMind } from '../src/mind.ts'
import { renderStatus } from '../src/interfaces/cli/commands/status/index.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'

const root = resolve(import.meta.dirname, '..')
const home = join(root, '.demo', 'home')
const project = join(root, '.demo', 'project')
const tty = Boolean(process.stdout.isTTY)
const bold = (t: string) => (tty ? `\u001b[1m${t}\u001b[22m` : t)
const dim = (t: string) => (tty ? `\u001b[2m${t}\u001b[22m` : t)
const chapter = (n: number, title: string) => console.log(`\n${bold(`── ${n}. ${title} ${'─'.repeat(Math.max(0, 60 - title.length))}`)}`)
const show = (label: string, text: string) => console.log(`${dim(label)}\n${text.trimEnd().split('\n').map((l) => `  ${l}`).join('\n')}`)

// A clean demo home every run, inside the repository (ignored by git), never ~/.engram.
rmSync(join(root, '.demo'), { recursive: true, force: true })
const env = { HOME: join(root, '.demo', 'user-home'), PATH: process.env.PATH }

console.log(bold('engram — long-term memory for LLM agents'))
console.log(dim(`demo home: ${home}   (no API key, no server: SQLite + markdown files)`))

chapter(1, 'Open a mind')
const mind = await createMind({ home, project, env })
console.log(`agent "${mind.agent}" opened; storage: ${mind.backend.name}, full-text: ${mind.backend.capabilities.fullText}, vectors: ${mind.backend.capabilities.vectors}`)
console.log(`LLM: ${mind.llm.available ? mind.llm.provider : 'none (offline paths, their output marked as such)'}; embedder: ${mind.embedder?.id ?? 'none'}`)

chapter(2, 'Declarative memory is markdown a person can read')
const global = mind.backend.engrams('global')!
const projectScope = mind.backend.engrams('project')!
await global.encodeRule({ kind: 'always', text: 'Answer in British English', confidence: 'high', source: 'user', meta: {} })
await global.encodeRule({ kind: 'never', text: 'Commit secrets or API keys to git', confidence: 'high', source: 'user', meta: {} })
await projectScope.encodeRule({ kind: 'when', text: 'If the tests touch PostgreSQL → start the test server first', confidence: 'medium', source: 'consolidation', meta: {} })
await global.encodeLesson({ kind: 'lesson', text: 'The billing API rate-limits at about 50 requests per minute', topic: 'billing-api', confidence: 'medium', source: 'llm', meta: {} })
const again = await global.encodeLesson({ kind: 'lesson', text: 'The billing API rate-limits at about 50 requests per minute.', topic: 'billing-api', confidence: 'medium', source: 'llm', meta: {} })
console.log(`encoding the same lesson twice → ${again.kind}`)
await global.rewriteIdentity([
  { kind: 'profile', text: 'Name: Ada', meta: {} },
  { kind: 'profile', text: 'Timezone: Europe/London', meta: {} },
])
show('agents/default/memory/rules.md', readFileSync(join(mind.layout.globalMemoryDir, 'rules.md'), 'utf8'))
show('agents/default/memory/lessons.md', readFileSync(join(mind.layout.globalMemoryDir, 'lessons.md'), 'utf8'))

chapter(3, 'Documents with frontmatter, versioned on every rewrite')
await mind.backend.documents.write('knowledge', 'deploy-process', { confidence: 0.9, version: 1 }, '# Deploy process\n\nDeploys go out on Tuesdays after the staging smoke test passes.\n')
await mind.backend.documents.write('knowledge', 'deploy-process', { confidence: 0.9, version: 2 }, '# Deploy process\n\nDeploys go out on Tuesdays and Thursdays after the staging smoke test passes.\n', { reason: 'schedule changed' })
const versions = await mind.backend.documents.versions('knowledge', 'deploy-process')
console.log(`knowledge/deploy-process.md is at version 2; the old text is kept: ${versions.map((v) => v.path).join(', ')}`)
await mind.backend.documents.write('user', 'ada', {}, '# Ada\n\n- Lead engineer on the billing service\n- Prefers short answers\n')

chapter(4, 'Every message kept; every event on the activity log')
const conversation = await mind.backend.context.conversation('chat-1', { agent: mind.agent, user: 'ada' })
const now = mind.clock.now().toISOString()
await mind.backend.context.appendMessages(conversation.id, [
  { role: 'user', content: 'Can you check why the billing export failed last night?', at: now, tokenCount: 12 },
  { role: 'assistant', content: 'The export hit the billing API rate limit; I will batch the calls.', at: now, tokenCount: 15 },
])
await mind.backend.activity.append({ ts: now, type: 'message_received', from: 'ada', channel: 'chat', content: 'Can you check why the billing export failed last night?' })
await mind.backend.activity.append({ ts: now, type: 'tool_use', tool: 'http_get', summary: 'GET /billing/export → 429 Too Many Requests' })
console.log(`conversation chat-1 holds ${await mind.backend.context.messageCount(conversation.id)} messages; activity log days: ${(await mind.backend.activity.days()).join(', ')}`)

chapter(5, 'Hand edits are memories too')
const lessonsFile = join(mind.layout.globalMemoryDir, 'lessons.md')
appendFileSync(lessonsFile, '- Invoices are archived to cold storage after 18 months <!-- topic:billing-api ts:2026-03-02 -->\nthis line is not a memory entry\n')
console.log('appended by hand to lessons.md: one lesson and one line that is not an entry')
const report = await mind.reindex()
console.log(`reindex: ${report.added} added, ${report.updated} updated, ${report.removed} removed, ${report.unchanged} unchanged, in ${report.ms} ms`)
for (const problem of report.problems) console.log(`kept and reported: ${problem.file}:${problem.line} — ${problem.reason}`)
const hits = await mind.backend.index.search({ text: 'when are invoices archived', limit: 3 })
const units = await mind.backend.index.get(hits.map((h) => h.id))
console.log(`search "when are invoices archived" → ${units.map((u) => `[${u.kind}] ${u.text.slice(0, 70)}`).join(' | ') || '(nothing)'}`)

chapter(6, 'engram status')
console.log(renderStatus(await mind.status(), tty))
await mind.close()

chapter(7, 'engram doctor')
const out: string[] = []
await runCli(['doctor', '--home', home, '--human'], { stdout: { write: (t: string) => out.push(t) }, stderr: process.stderr, env, cwd: root, isTTY: tty })
console.log(out.join('').trimEnd())

console.log(`\n${dim(`Look around: ${home}  (try: npm run engram -- status --home ${home})`)}`)
