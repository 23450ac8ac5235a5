/**
 * The `engram context …` commands, run in-process through their Command objects against a temp
 * home (the shell's JSON envelope and exit-code mapping are tested in cli.test.ts).
 */
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { EngramError } from '../src/core/errors.ts'
import type { Command, CommandResult } from '../src/interfaces/cli/command.ts'
import { COMMANDS } from '../src/interfaces/cli/commands/index.ts'
import { doctorCommand } from '../src/interfaces/cli/commands/doctor/index.ts'
import { ExitCode } from '../src/interfaces/cli/io.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

/** The command as the CLI's registry loads it. */
async function command(name: string): Promise<Command> {
  const entry = COMMANDS.find((c) => c.path.join(' ') === `context ${name}`)
  assert.ok(entry, name)
  return entry.load()
}

async function run(tmp: TempHome, name: string, args: string[], options: Record<string, string | boolean>): Promise<CommandResult> {
  return (await command(name)).run({
    io: { stdout: { write: () => true }, stderr: { write: () => true }, env: tmp.env, cwd: tmp.project, isTTY: false },
    args,
    options,
    json: true,
    settings: { home: tmp.home },
  })
}

test('append (text and JSONL with broken lines), assemble, compact, search, describe, expand, stats', async (t) => {
  const tmp = makeTempHome('engram-context-cli-')
  t.after(tmp.cleanup)
  const one = await run(tmp, 'append', [], { session: 'cli', role: 'user', text: 'The vault code is 7731.', user: 'ada' })
  assert.equal(one.exitCode, undefined)
  assert.deepEqual((one.data as { seqs: unknown }).seqs, { from: 1, to: 1 })

  const lines = Array.from({ length: 40 }, (_, i) => JSON.stringify({ role: i % 2 ? 'assistant' : 'user', content: `Line ${i}: we tuned the heron cache to ${i * 3} MB.`, at: `2026-03-01T10:${String(i).padStart(2, '0')}:00Z` }))
  lines.splice(5, 0, '{"role": "user", "content": "cut off')
  lines.splice(12, 0, '{"role": "robot", "content": "who am I"}')
  lines.push('')
  mkdirSync(tmp.project, { recursive: true })
  writeFileSync(join(tmp.project, 'turns.jsonl'), lines.join('\n'))
  const bulk = await run(tmp, 'append', [], { session: 'cli', file: 'turns.jsonl' })
  assert.equal(bulk.exitCode, ExitCode.user, 'exit 3 when some lines were bad')
  const data = bulk.data as { appended: number; badLines: Array<{ line: number; reason: string }> }
  assert.equal(data.appended, 40, 'every valid line is appended')
  assert.deepEqual(
    data.badLines.map((b) => b.line),
    [6, 13],
  )
  assert.match(data.badLines[1]!.reason, /role "robot"/)

  const stats = (await run(tmp, 'stats', [], { session: 'cli' })).data as { messages: number; provider: string }
  assert.equal(stats.messages, 41)
  assert.equal(stats.provider, 'lcm')

  const compacted = (await run(tmp, 'compact', [], { session: 'cli', full: true, 'fresh-tail': '5' })).data as { kind: string; degraded: boolean }
  assert.equal(compacted.kind, 'compacted')
  assert.equal(compacted.degraded, true, 'offline: extractive, marked degraded')
  const afterCompaction = await run(tmp, 'stats', [], { session: 'cli' })
  assert.equal(afterCompaction.exitCode, undefined)
  assert.equal((afterCompaction.data as { consistency: { ok: boolean; messages: number } }).consistency.ok, true, 'the summaries still stand for every message')
  assert.match(afterCompaction.human ?? '', /lossless: every stored message is covered exactly once/)

  const assembled = (await run(tmp, 'assemble', [], { session: 'cli', budget: '400', 'fresh-tail': '5' })).data as {
    tokens: number
    items: Array<{ kind: string; summaryId?: string }>
  }
  assert.ok(assembled.tokens <= 400)
  const summaryId = assembled.items.find((i) => i.kind === 'summary')?.summaryId
  assert.ok(summaryId)

  // The session is ada's (decision 0017): searching and exploring it is done as her (--user).
  const search = (await run(tmp, 'search', ['vault', 'code'], { user: 'ada' })).data as { hits: Array<{ id: string }> }
  assert.ok(search.hits.some((h) => h.id === 'msg:1'))
  const asAgent = (await run(tmp, 'search', ['vault', 'code'], {})).data as { hits: Array<{ id: string }> }
  assert.deepEqual(asAgent.hits, [], "without --user, the agent's own conversations only")
  const described = (await run(tmp, 'describe', [summaryId], { user: 'ada' })).data as { kind: string; messageCount: number }
  assert.equal(described.kind, 'summary')
  await assert.rejects(run(tmp, 'describe', [summaryId], { user: 'bob' }), (e) => EngramError.is(e) && e.code === 'not_found')
  const expanded = (await run(tmp, 'expand', [summaryId], { messages: true, user: 'ada' })).data as { nodes: unknown[] }
  assert.equal(expanded.nodes.length, described.messageCount)

  await assert.rejects(run(tmp, 'assemble', [], { session: 'cli', budget: 'lots' }), (e) => EngramError.is(e) && /--budget/.test(e.message))
  await assert.rejects(run(tmp, 'append', [], { role: 'user', text: 'x' }), (e) => EngramError.is(e) && /--session/.test(e.fix ?? ''))
  await assert.rejects(run(tmp, 'describe', ['sum_00'], {}), (e) => EngramError.is(e) && e.code === 'not_found')

  const simple = await (await command('compact')).run({
    io: { stdout: { write: () => true }, stderr: { write: () => true }, env: tmp.env, cwd: tmp.project, isTTY: false },
    args: [],
    options: { session: 'cli' },
    json: true,
    settings: { home: tmp.home, 'context.provider': 'simple' },
  }).catch((e: unknown) => e)
  assert.ok(EngramError.is(simple) && simple.code === 'unsupported', 'the simple provider has no compaction, and says so')
})

test('a context window that lost an item: stats and doctor say so, with the fix; the message is still stored', async (t) => {
  const tmp = makeTempHome('engram-context-broken-')
  t.after(tmp.cleanup)
  for (const text of ['first', 'second', 'third']) await run(tmp, 'append', [], { session: 'broken', role: 'user', text })
  await run(tmp, 'append', [], { session: 'fine', role: 'user', text: 'hello' })
  const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: tmp.env, cwd: tmp.project, isTTY: false }
  const healthy = await doctorCommand.run({ io, args: [], options: {}, json: true, settings: { home: tmp.home } })
  const checkOf = (result: CommandResult) => (result.data as { checks: Array<{ name: string; status: string; detail: string; fix?: string }> }).checks.find((c) => c.name === 'context')
  assert.equal(checkOf(healthy)?.status, 'ok')
  assert.match(checkOf(healthy)?.detail ?? '', /2 newest conversations: every message covered exactly once/)

  // What a bug in compaction would leave behind: the window no longer points at message 2.
  const db = new DatabaseSync(join(tmp.home, 'engram.db'))
  db.prepare("DELETE FROM ctx_items WHERE position = 2 AND conversation_id = (SELECT id FROM ctx_conversations WHERE session_id = 'broken')").run()
  db.close()

  const stats = await run(tmp, 'stats', [], { session: 'broken' })
  assert.equal(stats.exitCode, ExitCode.unhealthy)
  assert.deepEqual((stats.data as { consistency: { problems: string[] } }).consistency.problems, ['message seq 2 is covered 0 times', 'coverage has 2 entries for 3 messages'])
  assert.match(stats.human ?? '', /NOT CONSISTENT/)
  const doctor = await doctorCommand.run({ io, args: [], options: {}, json: true, settings: { home: tmp.home } })
  assert.equal(doctor.exitCode, ExitCode.unhealthy)
  assert.equal(checkOf(doctor)?.status, 'fail')
  assert.match(checkOf(doctor)?.detail ?? '', /1 of the 2 newest conversations are not consistent: broken: message seq 2 is covered 0 times/)
  assert.match(checkOf(doctor)?.fix ?? '', /engram context stats --session/)
  const search = (await run(tmp, 'search', ['second'], {})).data as { hits: Array<{ snippet: string }> }
  assert.ok(search.hits.some((hit) => hit.snippet.includes('second')), 'the message itself is still there')
})
