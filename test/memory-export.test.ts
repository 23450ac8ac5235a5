/**
 * Markdown is an export (decision 0036), through the CLI: a home holding every kind of
 * memory of every owner → `engram export A`; `engram import engram A` into a fresh home →
 * `engram export B` gives the same files; importing twice changes nothing; a hostile tree is
 * reported file by file and the rest imported; `engram migrate --to` a second home moves the
 * memory and the conversations (messages, summaries, context items) without loss.
 */
import assert from 'node:assert/strict'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import type { Engram } from '../src/core/engram.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import type { MemoryExportReport } from '../src/memory/portability/export-memory.ts'
import type { MemoryImportReport } from '../src/memory/portability/import-memory.ts'
import type { MigrationReport } from '../src/memory/portability/migrate-backend.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

/** Every file under `dir`, relative, sorted. */
function tree(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true })
    .flatMap((entry) => {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`
      return entry.isDirectory() ? tree(dir, path) : [path]
    })
    .sort()
}

/** Asserts two exports hold the same files with the same bytes (the manifest: all but its time). */
function assertSameExport(a: string, b: string): void {
  assert.deepEqual(tree(b), tree(a))
  for (const path of tree(a)) {
    if (path === 'manifest.json') {
      const { exportedAt: _a, ...left } = JSON.parse(readFileSync(join(a, path), 'utf8'))
      const { exportedAt: _b, ...right } = JSON.parse(readFileSync(join(b, path), 'utf8'))
      assert.deepEqual(right, left, path)
    } else assert.equal(readFileSync(join(b, path), 'utf8'), readFileSync(join(a, path), 'utf8'), path)
  }
}

const lesson = (text: string, extra: Partial<Engram> = {}): Engram => ({ text, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', ...extra })

describe('engram export, import engram, migrate', () => {
  let tmp: TempHome
  let root: string
  let mind: Mind
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const homes: string[] = []
  const fresh = (name: string): string => {
    const home = join(root, name)
    homes.push(home)
    return home
  }
  const exportDir = (name: string): string => join(root, 'exports', name)

  async function cli(home: string, args: string[]): Promise<{ code: number; json: { ok: boolean; data?: unknown; error?: { code: string; message: string; fix?: string } } }> {
    let out = ''
    const code = await runCli([...args, '--home', home, '--json'], {
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: () => true },
      env: { ...tmp.env, ENGRAM_LLM_PROVIDER: 'none' },
      cwd: root,
      isTTY: false,
    })
    return { code, json: JSON.parse(out.trim().split('\n').pop() ?? '{}') }
  }

  before(async () => {
    tmp = makeTempHome('engram-export-')
    root = join(tmp.home, '..')
    mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, embedder: null })
    const saved = await mind.encode([
      { text: 'Answer in English unless asked otherwise', kind: 'always', scope: 'global', confidence: 'high', source: 'user' },
      { text: 'Run the migrations before deploying', kind: 'never', scope: 'global', confidence: 'high', source: 'user' },
      { text: 'When a deploy fails, read the release notes first', kind: 'when', scope: 'global', confidence: 'high', source: 'user', tool: 'deploy' },
      lesson('Deploys on Fridays need a second reviewer', { topic: 'deploys' }),
      lesson('The staging deploy takes four minutes', { topic: 'deploys' }),
      lesson('The office coffee machine is on floor 3'),
      lesson('Ada prefers answers in bullet points', { owner: 'user:ada', topic: 'style' }),
      { text: 'Never call Ada before 10:00', kind: 'never', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
      lesson('Bob keeps his notes in Obsidian', { owner: 'user:bob' }),
      lesson('The team standup is at 09:30', { owner: 'shared', topic: 'team' }),
    ])
    assert.equal(saved.saved.length, 10, JSON.stringify(saved.rejected))
    await mind.backend.engrams('global')?.rewriteIdentity([{ text: 'I am the release assistant of the platform team', kind: 'profile', meta: {} }])
    const docs = mind.backend.documents
    await docs.write('knowledge', 'tea', { created_at: '2026-03-01T08:00:00Z', confidence: 0.9, source_episodes: 2 }, '# Tea\n\nGreen tea steeps for two minutes.\n')
    await docs.write('knowledge', 'tea', { created_at: '2026-03-01T08:00:00Z', confidence: 0.95, source_episodes: 3 }, '# Tea\n\nGreen tea steeps for two minutes at 80°C.\n')
    await docs.write('procedure', 'release', { description: 'Cut a release', success_count: 3, failure_count: 0, version: 2 }, '1. Tag\n2. Build\n3. Publish\n')
    await docs.append('episode', '2026-03-01', '## 10:00 Deploy\n\nThe deploy went fine.\n')
    await mind.backend.owned('user:ada').documents.write('knowledge', 'ada-projects', { confidence: 0.8 }, 'Ada works on the billing service.\n')
    await mind.backend.owned('shared').documents.write('knowledge', 'office', {}, 'The office is in Lisbon.\n')
    await docs.write('user', 'ada', { name: 'Ada' }, '# Ada\n\n- Prefers bullet points\n')
    await mind.skills.save({ label: 'csv_summary', name: 'Summarise a CSV', whenToUse: 'When asked to summarise a CSV file', declarative: '1. Load it\n2. Describe columns\n', code: { 'load.py': 'print("load")\n' } })
    await mind.skills.incrementUsed('csv_summary')
    // Confirmations of ada's sessions: one waiting, one she rejected.
    const confirmations = mind.backend.confirmations
    await confirmations.enqueue({ text: 'Ada owns the billing runbook', kind: 'lesson', scope: 'global', confidence: 'medium', source: 'llm', owner: 'user:ada' }, 'copilot mode: confidence medium', 'ada')
    const rejected = await confirmations.enqueue({ text: 'Ada dislikes tea', kind: 'lesson', scope: 'global', confidence: 'low', source: 'llm', owner: 'user:ada' }, 'copilot mode: confidence low', 'ada')
    await confirmations.reject([rejected.id], 'ada')
    // A conversation with a summary of its first two messages.
    const session = mind.session('chat-ada', { user: 'ada' })
    for (const [question, answer] of [
      ['Where is the coffee machine?', 'On floor 3.'],
      ['When is the standup?', 'At 09:30.'],
    ] as const) {
      const turn = await session.begin(question)
      await session.end(turn, answer)
    }
    await mind.idle()
    const conversation = await mind.backend.context.findConversation('chat-ada', 'default')
    assert.ok(conversation)
    const items = await mind.backend.context.items(conversation.id)
    const folded = await mind.backend.context.messagesById(items.slice(0, 2).map((item) => (item.kind === 'message' ? item.messageId : -1)))
    await mind.backend.context.replaceWithSummary(
      conversation.id,
      items.slice(0, 2).map((item) => item.position),
      { kind: 'leaf', depth: 0, content: 'Ada asked where the coffee machine is: floor 3.', tokenCount: 12, sourceTokenCount: 20, earliestAt: folded[0]?.at as string, latestAt: folded[1]?.at as string, method: 'deterministic', messageIds: folded.map((m) => m.id) },
    )
    await mind.close()
  })
  after(() => tmp.cleanup())

  test('export writes the seeds tree of every owner, with a manifest and a README, and refuses where it must', async () => {
    const a = exportDir('a')
    const exported = await cli(tmp.home, ['export', a])
    assert.equal(exported.code, 0, JSON.stringify(exported.json))
    const report = exported.json.data as MemoryExportReport
    const files = tree(a)
    for (const path of [
      'README.md',
      'manifest.json',
      'agents/default/memory/profile.md',
      'agents/default/memory/rules.md',
      'agents/default/memory/lessons.md',
      'agents/default/memory/topics/deploys.md',
      'agents/default/knowledge/tea.md',
      'agents/default/procedures/release.md',
      'agents/default/episodes/2026-03-01.md',
      'agents/default/skills/csv_summary/meta.json',
      'agents/default/skills/csv_summary/declarative.md',
      'agents/default/skills/csv_summary/code/load.py',
      'agents/default/skills/csv_summary/stats.json',
      'agents/default/users/ada/memory/lessons.md',
      'agents/default/users/ada/memory/rules.md',
      'agents/default/users/ada/memory/topics/style.md',
      'agents/default/users/ada/knowledge/ada-projects.md',
      'agents/default/users/bob/memory/lessons.md',
      'shared/memory/lessons.md',
      'shared/memory/topics/team.md',
      'shared/knowledge/office.md',
      'shared/users/ada.md',
    ]) {
      assert.ok(files.includes(path), `${path} in ${files.join(', ')}`)
    }
    // The engram files are the home's own entries, rendered by the same codec.
    for (const path of ['agents/default/memory/rules.md', 'agents/default/memory/lessons.md', 'agents/default/memory/topics/deploys.md', 'agents/default/users/ada/memory/rules.md']) {
      assert.equal(readFileSync(join(a, path), 'utf8'), readFileSync(join(tmp.home, path), 'utf8'), path)
    }
    assert.equal(readFileSync(join(a, 'agents/default/knowledge/tea.md'), 'utf8'), readFileSync(join(tmp.home, 'agents/default/knowledge/tea.md'), 'utf8'))
    assert.match(readFileSync(join(a, 'agents/default/knowledge/tea.md'), 'utf8'), /80°C/)
    assert.deepEqual(JSON.parse(readFileSync(join(a, 'agents/default/skills/csv_summary/stats.json'), 'utf8')).stage_1, { recommended: 0, used: 1 })
    const manifest = JSON.parse(readFileSync(join(a, 'manifest.json'), 'utf8'))
    assert.deepEqual([manifest.format, manifest.backend, manifest.agent, manifest.counts.skills, manifest.counts.userProfiles], ['engram-memory-tree', 'embedded', 'default', 1, 1])
    assert.equal(typeof manifest.engramVersion, 'string')
    assert.equal(manifest.counts.owners, 4, 'agent, ada, bob, shared')
    assert.equal(report.counts.files, files.length - 2)
    assert.match(readFileSync(join(a, 'README.md'), 'utf8'), /engram import engram DIR/)

    const again = await cli(tmp.home, ['export', a])
    assert.equal(again.code, 3)
    assert.match(again.json.error?.fix ?? '', /--force/)
    assert.equal((await cli(tmp.home, ['export', join(tmp.home, 'out')])).code, 3, 'inside the home')
    // Deterministic: a second export of the same memory is the same, byte for byte.
    const forced = await cli(tmp.home, ['export', exportDir('a2')])
    assert.equal(forced.code, 0)
    assertSameExport(a, exportDir('a2'))
  })

  test('import engram into a fresh home, then export: the same files; importing twice changes nothing', async () => {
    const home = fresh('home-b')
    const imported = await cli(home, ['import', 'engram', exportDir('a')])
    assert.equal(imported.code, 0, JSON.stringify(imported.json))
    const report = imported.json.data as MemoryImportReport
    assert.deepEqual(report.problems, [])
    assert.ok(report.counts.entries >= 9 && report.counts.documents >= 6 && report.counts.skills === 1, JSON.stringify(report.counts))
    assert.equal((await cli(home, ['export', exportDir('b')])).code, 0)
    assertSameExport(exportDir('a'), exportDir('b'))

    const twice = await cli(home, ['import', 'engram', exportDir('a')])
    assert.equal(twice.code, 0)
    const counts = (twice.json.data as MemoryImportReport).counts
    assert.deepEqual([counts.entries, counts.topicEntries, counts.documents, counts.skills], [0, 0, 0, 0], JSON.stringify(counts))
    assert.equal((await cli(home, ['export', exportDir('b2')])).code, 0)
    assertSameExport(exportDir('a'), exportDir('b2'))
    // No earlier versions were made by the second import.
    assert.ok(!existsSync(join(home, 'agents/default/archive/versions/knowledge')), 'the second import rewrote nothing')
    // And the search index knows what was imported.
    const searched = await cli(home, ['search', 'coffee machine floor'])
    assert.match(JSON.stringify(searched.json.data), /coffee machine is on floor 3/)
  })

  test('a hostile tree: each bad file is reported and skipped, the rest is imported', async () => {
    const hostile = exportDir('hostile')
    cpSync(exportDir('a'), hostile, { recursive: true })
    writeFileSync(join(hostile, 'agents/default/knowledge/broken.md'), '---\ntitle: [unclosed\n---\nbody\n')
    writeFileSync(join(hostile, 'agents/default/knowledge/binary.md'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]))
    writeFileSync(join(hostile, 'agents/default/knowledge/latin1.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
    writeFileSync(join(hostile, 'agents/default/knowledge/huge.md'), Buffer.alloc(9 * 1024 * 1024, 0x61))
    const canary = join(root, 'outside-canary.md')
    writeFileSync(canary, 'canary quagga3391\n')
    symlinkSync(canary, join(hostile, 'agents/default/knowledge/outside.md'))
    mkdirSync(join(hostile, 'agents/default/nonsense'), { recursive: true })
    writeFileSync(join(hostile, 'agents/default/nonsense/x.md'), 'hello\n')
    writeFileSync(join(hostile, 'agents/default/memory/rules.md'), `${readFileSync(join(hostile, 'agents/default/memory/rules.md'), 'utf8')}this line is no entry\n`)

    const home = fresh('home-hostile')
    const imported = await cli(home, ['import', 'engram', hostile])
    assert.equal(imported.code, 0, JSON.stringify(imported.json))
    const problems = (imported.json.data as MemoryImportReport).problems.map((problem) => `${problem.path}: ${problem.reason}`)
    const expect = (path: string, reason: RegExp): void => {
      assert.ok(
        problems.some((line) => line.startsWith(`${path}:`) && reason.test(line)),
        `${path} ${reason} in\n${problems.join('\n')}`,
      )
    }
    expect('agents/default/knowledge/broken.md', /frontmatter/)
    expect('agents/default/knowledge/binary.md', /binary/)
    expect('agents/default/knowledge/latin1.md', /UTF-8/)
    expect('agents/default/knowledge/huge.md', /larger than/)
    expect('agents/default/knowledge/outside.md', /symbolic link/)
    expect('agents/default/nonsense/x.md', /not a file engram keeps/)
    expect('agents/default/memory/rules.md', /no entry/)
    assert.equal(problems.length, 7, problems.join('\n'))
    assert.equal((await cli(home, ['export', exportDir('hostile-out')])).code, 0)
    assertSameExport(exportDir('a'), exportDir('hostile-out'))
    assert.doesNotMatch(tree(home).map((path) => readFileSync(join(home, path)).toString('latin1')).join(''), /quagga3391/)
  })
  test('migrate --to a second home: the same export, and the conversation with its summary and items as they were', async () => {
    const home = fresh('home-e')
    const migrated = await cli(tmp.home, ['migrate', '--to', home])
    assert.equal(migrated.code, 0, JSON.stringify(migrated.json))
    const [report] = (migrated.json.data as { agents: MigrationReport[] }).agents
    assert.ok(report)
    assert.deepEqual(report.problems, [])
    assert.equal(report.status, 'complete', JSON.stringify(report.verification))
    assert.deepEqual([report.conversations.moved, report.conversations.summaries], [1, 1])
    assert.ok(report.activity.events > 0 && report.turns.moved === 2, JSON.stringify(report))
    assert.equal((await cli(home, ['export', exportDir('e')])).code, 0)
    assertSameExport(exportDir('a'), exportDir('e'))

    const reopen = (h: string): Promise<Mind> => createMind({ home: h, env: tmp.env, ignoreConfigFile: true, clock, embedder: null, reindexOnOpen: false })
    const source = await reopen(tmp.home)
    const target = await reopen(home)
    try {
      const conversationOf = async (m: Mind) => {
        const conversation = await m.backend.context.findConversation('chat-ada', 'default')
        assert.ok(conversation)
        const messages = await m.backend.context.messages(conversation.id)
        const seqOf = new Map(messages.map((message) => [message.id, message.seq]))
        const items = await m.backend.context.items(conversation.id)
        const summaries = await m.backend.context.summariesById(items.flatMap((item) => (item.kind === 'summary' ? [item.summaryId] : [])))
        return {
          user: conversation.user,
          messages: messages.map(({ seq, role, content, name, at, tokenCount, meta }) => ({ seq, role, content, name, at, tokenCount, meta })),
          items: await Promise.all(
            items.map(async (item) => {
              if (item.kind === 'message') return `message ${seqOf.get(item.messageId)}`
              const summary = summaries.find((candidate) => candidate.id === item.summaryId)
              const folds = await m.backend.context.summaryChildren(item.summaryId)
              return `summary ${summary?.kind}/${summary?.depth}/${summary?.method} ${summary?.content} [${summary?.earliestAt}..${summary?.latestAt}] folds ${folds.messageIds.map((id) => seqOf.get(id)).join(',')}`
            }),
          ),
        }
      }
      const [before, afterMigration] = [await conversationOf(source), await conversationOf(target)]
      assert.deepEqual(afterMigration, before)
      assert.equal(before.items.length, 3, 'a summary and the two messages after it')
      const events = async (m: Mind) => (await m.backend.activity.read()).map(({ ref: _ref, ...event }) => event)
      assert.deepEqual(await events(target), await events(source))
      const turns = async (m: Mind) => (await m.backend.lifecycle.recentTurns('default', 'ada', 10)).map(({ messageId: _m, replyIds, ...turn }) => ({ ...turn, replies: replyIds.length }))
      assert.deepEqual(await turns(target), await turns(source))
      const asked = async (m: Mind) => (await m.backend.confirmations.ofUser('ada')).map((c) => `${c.status} ${c.engram?.text} ${c.reason}`).sort()
      assert.deepEqual(await asked(target), await asked(source))
      assert.equal((await asked(source)).length, 2)
    } finally {
      await Promise.all([source.close(), target.close()])
    }

    // Again: nothing is added twice.
    const again = await cli(tmp.home, ['migrate', '--to', home])
    assert.equal(again.code, 0, JSON.stringify(again.json))
    const [second] = (again.json.data as { agents: MigrationReport[] }).agents
    assert.ok(second)
    assert.deepEqual(
      [second.memory.entries, second.memory.documents, second.conversations.moved, second.conversations.alreadyThere, second.activity.events, second.turns.moved, second.confirmations.pending + second.confirmations.decided],
      [0, 0, 0, 1, 0, 0, 0],
      JSON.stringify(second),
    )
    const refused = await cli(tmp.home, ['migrate', '--to', tmp.home])
    assert.equal(refused.code, 3)
  })
})
