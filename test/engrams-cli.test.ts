import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { Command, CommandContext } from '../src/interfaces/cli/command.ts'
import { confirmCommand } from '../src/interfaces/cli/commands/confirm/index.ts'
import { importCommand } from '../src/interfaces/cli/commands/import/index.ts'
import { memoryContextCommand } from '../src/interfaces/cli/commands/memory/index.ts'
import { rememberCommand } from '../src/interfaces/cli/commands/remember/index.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

describe('engram remember / memory context / confirm / import', () => {
  let temp: TempHome
  afterEach(() => temp.cleanup())

  function run(command: Command, args: string[], options: CommandContext['options'] = {}, mode = 'autopilot') {
    const context: CommandContext = {
      io: { stdout: { write: () => true }, stderr: { write: () => true }, env: temp.env, cwd: temp.home, isTTY: false },
      args,
      options,
      json: true,
      settings: { home: temp.home, project: temp.project, 'memory.mode': mode },
    }
    return command.run(context)
  }

  it('remembers, lists and answers confirmations, and shows the memory context', async () => {
    temp = makeTempHome('engram-cli-')
    mkdirSync(temp.project, { recursive: true })
    const saved = await run(rememberCommand, ['Use', 'httpx', 'instead', 'of', 'requests'], { kind: 'always' })
    assert.equal(saved.exitCode, 0)
    assert.match(saved.human, /saved \[always, global\]/)
    const queued = await run(rememberCommand, ['The staging DB is read-only'], { kind: 'lesson', scope: 'project', confidence: 'medium' }, 'copilot')
    assert.match(queued.human, /waiting for confirmation \(id 1/)
    await assert.rejects(run(rememberCommand, ['x'], { kind: 'rumour' }), /--kind must be one of/)

    const listed = await run(confirmCommand, [], {}, 'copilot')
    assert.equal((listed.data as { pending: unknown[] }).pending.length, 1)
    const answered = await run(confirmCommand, [], { accept: '1' }, 'copilot')
    assert.equal((answered.data as { saved: number }).saved, 1)
    assert.equal(((await run(confirmCommand, [], {})).data as { pending: unknown[] }).pending.length, 0)

    // Answered as Anton asks it: the numbers to keep, in list order; the rest are rejected.
    await run(rememberCommand, ['Deploys freeze on Fridays'], { kind: 'lesson', confidence: 'medium' }, 'copilot')
    await run(rememberCommand, ['The VPN drops every hour'], { kind: 'lesson', confidence: 'medium' }, 'copilot')
    await assert.rejects(run(confirmCommand, [], { answer: '3' }, 'copilot'), /is not an answer to the 2 pending memories/)
    const picked = (await run(confirmCommand, [], { answer: '2' }, 'copilot')).data as { saved: number; rejected: number }
    assert.deepEqual([picked.saved, picked.rejected], [1, 1])

    const context = await run(memoryContextCommand, [])
    const text = (context.data as { text: string }).text
    assert.match(text, /## Your memory — Global rules\n- Always: Use httpx instead of requests/)
    assert.match(text, /## Your memory — Project lessons\n- The staging DB is read-only/)
    assert.match(text, /The VPN drops every hour/)
    assert.doesNotMatch(text, /Deploys freeze on Fridays/)
  })

  it('imports an Anton folder', async () => {
    temp = makeTempHome('engram-cli-')
    const source = join(temp.home, '..', 'src-anton')
    mkdirSync(join(source, 'memory'), { recursive: true })
    writeFileSync(join(source, 'memory', 'lessons.md'), '# Lessons\n- pandas read_csv needs encoding=utf-8-sig for BOM files <!-- topic:pandas ts:2026-02-27 -->\n')
    const result = await run(importCommand, ['anton', source])
    assert.deepEqual((result.data as { counts: Record<string, unknown> }).counts.lessons, { imported: 1, duplicates: 0, conflicts: 0 })
    await assert.rejects(run(importCommand, ['hermes', source]), /anton or animaworks/)
  })
})
