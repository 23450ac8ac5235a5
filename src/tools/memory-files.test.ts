import assert from 'node:assert/strict'
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../core/clock.ts'
import { createMind, type Mind } from '../mind.ts'
import { createFileLocks } from '../storage/files/locks.ts'
import { makeTempHome, type TempHome } from '../testing/temp-home.ts'
import { buildReadMemoryFileTool, buildWriteMemoryFileTool, READ_MAX_CHARS } from './memory-files.ts'
import { memoryPathOfSource } from '../memory/tree/memory-paths.ts'
import type { EngramTool } from './tool.ts'

describe('read_memory_file and write_memory_file', () => {
  let temp: TempHome
  let mind: Mind
  let read: EngramTool
  let write: EngramTool
  const written: Array<{ path: string; source: string }> = []
  const clock = new ManualClock('2026-02-03T10:00:00Z')

  before(async () => {
    temp = makeTempHome('engram-memfiles-')
    mkdirSync(temp.project, { recursive: true })
    mind = await createMind({ home: temp.home, project: temp.project, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
    read = buildReadMemoryFileTool({ layout: mind.layout }) as EngramTool
    write = buildWriteMemoryFileTool({
      layout: mind.layout,
      documents: mind.backend.documents,
      activity: mind.backend.activity,
      locks: mind.backend.locks,
      projectLocks: createFileLocks({ dir: join(temp.project, '.engram', '.locks') }),
      clock,
      onWritten: (path, info) => {
        written.push({ path, source: info.source })
      },
    }) as EngramTool
    // A secret beside the home that no memory path may reach.
    writeFileSync(join(temp.home, '..', 'secret.txt'), 'top secret\n')
  })
  after(async () => {
    await mind.close()
    temp.cleanup()
  })

  const codeOf = (result: { data?: unknown }): unknown => (result.data as { code?: string } | undefined)?.code

  test('writes a knowledge note with frontmatter, reads it back, and logs the write', async () => {
    const result = await write.execute({ path: 'knowledge/green-tea.md', content: '# Green tea\nBrew at 80 °C for two minutes.\n' })
    assert.equal(result.isError, undefined, result.text)
    assert.match(result.text, /Wrote knowledge\/green-tea\.md/)
    const onDisk = readFileSync(join(mind.layout.knowledgeDir, 'green-tea.md'), 'utf8')
    assert.match(onDisk, /^---\ncreated_at: 2026-02-03T10:00:00.000Z\nupdated_at: 2026-02-03T10:00:00.000Z\n---\n# Green tea/)
    const back = await read.execute({ path: 'knowledge/green-tea.md' })
    assert.equal(back.isError, undefined)
    assert.match(back.text, /Brew at 80 °C/)
    assert.deepEqual(written.at(-1), { path: 'knowledge/green-tea.md', source: `agents/default/knowledge/green-tea.md` })
    const events = await mind.backend.activity.read({ types: ['memory_write'] })
    assert.equal(events.at(-1)?.content, 'knowledge/green-tea.md')
    assert.equal(events.at(-1)?.meta?.mode, 'overwrite')
  })

  test('a rewrite keeps the old version in the archive and the bookkeeping in the frontmatter', async () => {
    await mind.backend.documents.write('procedure', 'deploy', { success_count: 4, version: 2, created_at: '2026-01-01' }, '1. build\n2. ship\n')
    clock.advanceDays(1)
    const result = await write.execute({ path: 'procedures/deploy.md', content: '1. test\n2. build\n3. ship\n' })
    assert.equal(result.isError, undefined, result.text)
    assert.match(result.text, /Rewrote procedures\/deploy\.md.*archive/)
    const doc = await mind.backend.documents.read('procedure', 'deploy')
    assert.equal(doc?.frontmatter.success_count, 4)
    assert.equal(doc?.frontmatter.version, 3)
    assert.equal(doc?.frontmatter.created_at, '2026-01-01')
    assert.equal(doc?.body, '1. test\n2. build\n3. ship\n')
    const versions = await mind.backend.documents.versions('procedure', 'deploy')
    assert.equal(versions.length, 1)
  })

  test('fields engram keeps cannot be set: refused by name with how each changes, nothing written; restating them unchanged is fine', async () => {
    await mind.backend.documents.write('procedure', 'release', { success_count: 1, failure_count: 0, confidence: 1, version: 1 }, '1. tag\n')
    const before = readFileSync(join(mind.layout.proceduresDir, 'release.md'), 'utf8')
    const versionsBefore = (await mind.backend.documents.versions('procedure', 'release')).length
    const writesBefore = (await mind.backend.activity.read({ types: ['memory_write'] })).length

    const counted = await write.execute({ path: 'procedures/release.md', content: '---\nsuccess_count: 99\n---\n1. tag\n2. push\n' })
    assert.equal(counted.isError, true)
    assert.equal(codeOf(counted), 'invalid_argument')
    assert.match(counted.text, /cannot set success_count in procedures\/release\.md; nothing was written/)
    assert.match(counted.text, /report_procedure_outcome/)
    assert.match(counted.text, /Fix: leave success_count out/)

    const several = await write.execute({ path: 'procedures/release.md', content: '---\nprotected: true\nversion: 7\nconfidence: 1\n---\n1. tag\n' })
    assert.equal(several.isError, true)
    assert.match(several.text, /cannot set protected, version in/, 'confidence restated unchanged is not named')
    assert.match(several.text, /protected: only a person protects a memory/)
    assert.match(several.text, /version: engram adds one on every overwrite/)

    const fresh = await write.execute({ path: 'knowledge/self-trust.md', content: '---\nvalidated: true\n---\nI am always right.\n' })
    assert.equal(fresh.isError, true, 'a new file cannot start with an owned field either')
    assert.match(fresh.text, /cannot set validated/)

    assert.equal(readFileSync(join(mind.layout.proceduresDir, 'release.md'), 'utf8'), before)
    assert.equal((await mind.backend.documents.versions('procedure', 'release')).length, versionsBefore)
    assert.equal(await mind.backend.documents.read('knowledge', 'self-trust'), null)
    assert.equal((await mind.backend.activity.read({ types: ['memory_write'] })).length, writesBefore, 'no write was logged')

    // Read, edit the body, write back with the frontmatter as it was: allowed, and the version still moves on.
    const restated = await write.execute({ path: 'procedures/release.md', content: '---\nsuccess_count: 1\nfailure_count: 0\nconfidence: 1\nversion: 1\ndescription: cut a release\n---\n1. tag\n2. push\n' })
    assert.equal(restated.isError, undefined, restated.text)
    const doc = await mind.backend.documents.read('procedure', 'release')
    assert.equal(doc?.frontmatter.version, 2)
    assert.equal(doc?.frontmatter.success_count, 1)
    assert.equal(doc?.frontmatter.description, 'cut a release')
  })

  test('append adds to the end of state and topic files', async () => {
    await write.execute({ path: 'state/current_task.md', content: 'Migrating the database.' })
    const appended = await write.execute({ path: 'state/current_task.md', content: 'Step 2: copy rows.', mode: 'append' })
    assert.equal(appended.isError, undefined, appended.text)
    assert.equal(readFileSync(join(mind.layout.stateDir, 'current_task.md'), 'utf8'), 'Migrating the database.\nStep 2: copy rows.\n')
    await write.execute({ path: 'memory/topics/postgres.md', content: '# postgres\n- use COPY for bulk loads' })
    await write.execute({ path: 'memory/topics/postgres.md', content: '- VACUUM after big deletes', mode: 'append' })
    assert.equal(readFileSync(join(mind.layout.globalMemoryDir, 'topics', 'postgres.md'), 'utf8'), '# postgres\n- use COPY for bulk loads\n- VACUUM after big deletes\n')
    const project = await write.execute({ path: 'project/topics/build.md', content: 'npm run build' })
    assert.equal(project.isError, undefined, project.text)
    assert.equal(readFileSync(join(temp.project, '.engram', 'memory', 'topics', 'build.md'), 'utf8'), 'npm run build\n')
    assert.equal(written.at(-1)?.source, 'project:.engram/memory/topics/build.md')
  })

  test('path traversal, absolute paths, NUL bytes and unknown roots are refused with path_outside_memory', async () => {
    for (const path of ['../../etc/passwd', '/etc/passwd', 'knowledge/../../../secret.txt', 'knowledge/../../../../secret.txt', 'C:\\Windows\\win.ini', 'knowledge/a\u0000.md', 'journal/streaming.jsonl', 'engram.db', '~/.ssh/id_rsa', 'knowledge/.hidden.md']) {
      const r = await read.execute({ path })
      assert.equal(r.isError, true, path)
      assert.equal(codeOf(r), 'path_outside_memory', `${path}: ${r.text}`)
      assert.match(r.text, /Fix: /)
      const w = await write.execute({ path, content: 'x' })
      assert.equal(w.isError, true, path)
      assert.equal(codeOf(w), 'path_outside_memory', `${path}: ${w.text}`)
    }
    assert.equal(readFileSync(join(temp.home, '..', 'secret.txt'), 'utf8'), 'top secret\n')
  })

  test('a symlink that leads outside is refused for reading and writing', async () => {
    symlinkSync(join(temp.home, '..', 'secret.txt'), join(mind.layout.knowledgeDir, 'leak.md'))
    symlinkSync(join(temp.home, '..'), join(mind.layout.knowledgeDir, 'outside'))
    const r = await read.execute({ path: 'knowledge/leak.md' })
    assert.equal(codeOf(r), 'path_outside_memory', r.text)
    assert.doesNotMatch(r.text, /top secret/)
    const w = await write.execute({ path: 'knowledge/leak.md', content: 'overwritten' })
    assert.equal(codeOf(w), 'path_outside_memory', w.text)
    const viaFolder = await read.execute({ path: 'knowledge/outside/secret.txt' })
    assert.equal(codeOf(viaFolder), 'path_outside_memory', viaFolder.text)
    const listing = await read.execute({ path: 'knowledge/outside' })
    assert.equal(codeOf(listing), 'path_outside_memory', listing.text)
    assert.equal(readFileSync(join(temp.home, '..', 'secret.txt'), 'utf8'), 'top secret\n')
  })

  test('read-only places say how to change that memory instead', async () => {
    const rules = await write.execute({ path: 'memory/rules.md', content: '## Always\n- x' })
    assert.equal(codeOf(rules), 'path_outside_memory')
    assert.match(rules.text, /memorize/)
    const activity = await write.execute({ path: 'activity/2026-02-03.jsonl', content: '{}' })
    assert.equal(codeOf(activity), 'path_outside_memory')
    const soul = await write.execute({ path: 'SOUL.md', content: 'I obey everyone' })
    assert.equal(codeOf(soul), 'path_outside_memory')
    const nested = await write.execute({ path: 'knowledge/deep/nested.md', content: 'x' })
    assert.equal(codeOf(nested), 'path_outside_memory')
    const notMarkdown = await write.execute({ path: 'knowledge/data.json', content: '{}' })
    assert.equal(codeOf(notMarkdown), 'invalid_argument')
    assert.deepEqual(readdirSync(mind.layout.knowledgeDir).filter((name) => name.startsWith('data')), [])
  })

  test('activity pointers read a line range; long files come in windows with the offset to read on', async () => {
    const day = join(mind.layout.activityDir, '2026-02-01.jsonl')
    writeFileSync(day, `${Array.from({ length: 500 }, (_, i) => JSON.stringify({ ts: '2026-02-01T10:00:00Z', type: 'tool_use', content: `line ${i + 1}` })).join('\n')}\n`)
    const pointer = await read.execute({ path: 'activity/2026-02-01.jsonl#L12-14' })
    assert.equal(pointer.isError, undefined, pointer.text)
    assert.match(pointer.text, /lines 12-14 of 500/)
    assert.match(pointer.text, /"line 12"/)
    assert.match(pointer.text, /"line 14"/)
    assert.doesNotMatch(pointer.text, /"line 15"/)
    const first = await read.execute({ path: 'activity/2026-02-01.jsonl' })
    assert.match(first.text, /lines 1-200 of 500/)
    assert.match(first.text, /"offset": 201/)
    const next = await read.execute({ path: 'activity/2026-02-01.jsonl', offset: 201, limit: 50 })
    assert.match(next.text, /lines 201-250 of 500/)
    assert.match(next.text, /"line 201"/)
    const huge = join(mind.layout.knowledgeDir, 'huge.md')
    writeFileSync(huge, `${'x'.repeat(READ_MAX_CHARS * 2)}\nsecond\n`)
    const window = await read.execute({ path: 'knowledge/huge.md' })
    assert.ok(window.text.length < READ_MAX_CHARS + 500)
    assert.match(window.text, /line cut/)
    assert.match(window.text, /"offset": 2/)
  })

  test('episode section anchors, aliases from index sources, folder listings and missing files', async () => {
    writeFileSync(join(mind.layout.episodesDir, '2026-02-02.md'), '# 2026-02-02\n\n## 10:00 Tea talk\nAda likes sencha.\n\n## 11:00 Deploy\nShipped v2.\n')
    const section = await read.execute({ path: 'episodes/2026-02-02.md#10:00 Tea talk' })
    assert.match(section.text, /Ada likes sencha/)
    assert.doesNotMatch(section.text, /Shipped/)
    const alias = await read.execute({ path: 'agents/default/knowledge/green-tea.md' })
    assert.match(alias.text, /Brew at 80/)
    assert.equal(memoryPathOfSource('agents/default/knowledge/green-tea.md', mind.layout), 'knowledge/green-tea.md')
    assert.equal(memoryPathOfSource('project:.engram/memory/rules.md', mind.layout), 'project/rules.md')
    assert.equal(memoryPathOfSource('shared/users/ada.md', mind.layout), 'users/ada.md')
    assert.equal(memoryPathOfSource('conv:3', mind.layout), undefined)
    assert.equal(memoryPathOfSource('agents/other/knowledge/x.md', mind.layout), undefined)
    const root = await read.execute({ path: '' })
    assert.match(root.text, /knowledge\//)
    assert.match(root.text, /project\//)
    const folder = await read.execute({ path: 'knowledge' })
    assert.match(folder.text, /knowledge\/green-tea\.md/)
    const missing = await read.execute({ path: 'knowledge/nope.md' })
    assert.equal(codeOf(missing), 'not_found')
    assert.match(missing.text, /Fix: read "knowledge"/)
  })

  test('binary files are refused; bad arguments come back as readable errors', async () => {
    writeFileSync(join(mind.layout.knowledgeDir, 'blob.md'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]))
    const binary = await read.execute({ path: 'knowledge/blob.md' })
    assert.equal(codeOf(binary), 'invalid_argument')
    assert.match(binary.text, /not a text file/)
    const bad = await write.execute({ path: 'knowledge/x.md' })
    assert.equal(bad.isError, true)
    assert.match(bad.text, /content/)
    assert.match(bad.text, /Fix: pass/)
    const nul = await write.execute({ path: 'knowledge/x.md', content: 'a\u0000b' })
    assert.equal(codeOf(nul), 'invalid_argument')
  })
})
