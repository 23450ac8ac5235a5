import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { importAnimaWorks } from '../src/memory/engrams/import/animaworks.ts'
import { importAnton } from '../src/memory/engrams/import/anton.ts'
import { hashTree } from '../src/memory/engrams/test-support/hash-tree.ts'
import { type OpenedMemory, openMemory } from '../src/memory/engrams/test-support/open-memory.ts'
import { SEED_LESSONS, SEED_PROFILE, SEED_RULES } from '../src/core/test-support/anton-seed-examples.ts'

function write(root: string, path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true })
  writeFileSync(join(root, path), text)
}

// The examples printed in Anton's seed (001, "Memory Entry Format", "Episodic Memory", "Skills").
const ANTON_EPISODE = [
  `{"ts":"2026-02-27T14:30:52","session":"20260227_143052","turn":1,"role":"user","content":"What's the bitcoin price?","meta":{}}`,
  `{"ts":"2026-02-27T14:30:55","session":"20260227_143052","turn":1,"role":"assistant","content":"Let me check that.","meta":{}}`,
  `{"ts":"2026-02-27T14:31:00","session":"20260227_143052","turn":1,"role":"tool_call","content":"{'action': 'exec', ...}","meta":{"tool":"scratchpad"}}`,
  `{"ts":"2026-02-27T14:31:02","session":"20260227_143052","turn":1,"role":"scratchpad","content":"$67,432","meta":{"description":"Fetch BTC"}}`,
  `{"ts":"2026-02-27T14:31:03","session":"20260227_143052","turn":1,"role":"tool_result","content":"[output]\\n$67,432","meta":{"tool":"scratchpad"}}`,
  `{"ts":"2026-02-27T14:31:0`,
].join('\n')

describe('import', () => {
  const opened: OpenedMemory[] = []
  afterEach(async () => {
    for (const item of opened.splice(0)) {
      await item.close()
      item.temp.cleanup()
    }
  })

  it('anton: memory, topics, episodes, skills and the legacy folders, source unchanged, idempotent', async () => {
    const target = openMemory({ mode: 'copilot' })
    opened.push(target)
    const source = join(target.temp.home, '..', 'anton-src')
    const anton = join(source, '.anton')
    write(anton, 'memory/rules.md', SEED_RULES)
    write(anton, 'memory/lessons.md', SEED_LESSONS)
    write(anton, 'memory/profile.md', SEED_PROFILE)
    write(anton, 'memory/topics/api-coingecko.md', '# api-coingecko\nNotes kept by hand about the API.\n- CoinGecko free tier rate-limits at ~50 req/min <!-- topic:api-coingecko ts:2026-02-27 -->\n- Use the /simple/price endpoint for spot prices\n')
    write(anton, 'episodes/20260227_143052.jsonl', `${ANTON_EPISODE}\n`)
    write(anton, 'skills/csv_summary/meta.json', '{"label":"csv_summary","name":"CSV Summary","when_to_use":"User asks to explore, summarize, or describe a CSV file."}\n')
    write(anton, 'skills/csv_summary/declarative.md', '1. Load the CSV with pandas\n2. Print describe()\n')
    write(anton, 'skills/csv_summary/stats.json', '{"stage_1":{"recommended":3,"used":2}}\n')
    write(anton, 'skills/csv_summary/code/__init__.py', 'def summarize(path):\n    pass\n')
    write(anton, 'context/project-overview.md', '# Overview\n- The project ingests crypto prices hourly\n- ok\n- Reports go to the #data channel\n')
    write(anton, 'learnings/a1.md', '- Retry 429s with exponential backoff\n- The vendor API returns UTC timestamps\n')
    write(anton, 'learnings/index.json', '{"a1": {"topic": "vendor-api", "summary": "vendor quirks"}}\n')
    const before = hashTree(source)

    const report = await importAnton({
      dir: source,
      encoder: target.memory.encoder,
      store: target.memory.global,
      activity: target.backend.activity,
      skillsDir: join(target.temp.home, 'agents/default/skills'),
    })
    assert.equal(hashTree(source), before)
    assert.deepEqual(report.counts.rules, { imported: 4, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts.lessons, { imported: 3, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts.profile, { imported: 5, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts['topic lessons'], { imported: 1, duplicates: 1, conflicts: 0 })
    assert.deepEqual(report.counts['episode events'], { imported: 5, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts['skill files'], { imported: 4, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts['legacy context lessons'], { imported: 2, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts['legacy learnings lessons'], { imported: 2, duplicates: 0, conflicts: 0 })
    assert.equal(report.problems.length, 1, JSON.stringify(report.problems)) // the cut-off last episode line
    assert.match(report.problems[0]?.reason ?? '', /not JSON/)

    // The seed's files round-trip byte for byte (copilot mode did not hold anything back: import is explicit).
    const memoryDir = join(target.temp.home, 'agents/default/memory')
    assert.equal(readFileSync(join(memoryDir, 'rules.md'), 'utf8'), SEED_RULES)
    assert.equal(readFileSync(join(memoryDir, 'profile.md'), 'utf8'), SEED_PROFILE)
    const lessons = readFileSync(join(memoryDir, 'lessons.md'), 'utf8')
    assert.ok(lessons.startsWith(SEED_LESSONS), lessons)
    assert.match(readFileSync(join(memoryDir, 'topics/api-coingecko.md'), 'utf8'), /Notes kept by hand/)
    assert.match(readFileSync(join(memoryDir, 'topics/vendor-api.md'), 'utf8'), /Retry 429s/)
    assert.match(readFileSync(join(memoryDir, 'topics/project-overview.md'), 'utf8'), /Reports go to the #data channel/)
    assert.equal(readFileSync(join(target.temp.home, 'agents/default/skills/csv_summary/code/__init__.py'), 'utf8'), 'def summarize(path):\n    pass\n')
    const events = await target.backend.activity.read({ types: ['message_received', 'response_sent', 'tool_use'] })
    assert.equal((await target.backend.activity.read({ types: ['memory_write'] })).length, 17)
    assert.deepEqual(
      events.map((event) => [event.type, event.session]),
      [['message_received', '20260227_143052'], ['response_sent', '20260227_143052'], ['tool_use', '20260227_143052'], ['tool_use', '20260227_143052'], ['tool_use', '20260227_143052']],
    )
    assert.equal((await target.memory.encoder.pendingConfirmations()).length, 0)

    const again = await importAnton({ dir: source, encoder: target.memory.encoder, store: target.memory.global, activity: target.backend.activity, skillsDir: join(target.temp.home, 'agents/default/skills') })
    for (const [kind, count] of Object.entries(again.counts)) assert.equal(count.imported, 0, `${kind} imported again`)
    assert.equal(again.counts['episode events']?.duplicates, 5)
    assert.equal(hashTree(source), before)
  })

  it('animaworks: knowledge, procedures, episodes, activity log, skills and shared users, source unchanged, idempotent', async () => {
    const target = openMemory()
    opened.push(target)
    const root = join(target.temp.home, '..', 'animaworks')
    const anima = join(root, 'animas', 'sakura')
    const knowledge = '---\ncreated_at: "2026-02-18T03:00:00+09:00"\nupdated_at: "2026-02-18T03:00:00+09:00"\nsource_episodes: 3\nconfidence: 0.9\nauto_consolidated: true\nversion: 1\n---\n# Deploys\nDeploys happen on Tuesdays.\n'
    const procedure = '---\ndescription: 手順の説明\nconfidence: 0.5\nsuccess_count: 0\nfailure_count: 0\nversion: 1\ncreated_at: "2026-02-18T03:00:00+09:00"\nupdated_at: "2026-02-18T03:00:00+09:00"\nauto_distilled: true\nprotected: false\n---\n1. Check the queue\n2. Restart the worker\n'
    write(anima, 'knowledge/deploys.md', knowledge)
    write(anima, 'knowledge/plain.md', 'A note without frontmatter.\n')
    write(anima, 'procedures/restart-worker.md', procedure)
    write(anima, 'episodes/2026-02-17.md', '## 14:30\nTalked about deploys.\n')
    write(anima, 'episodes/notes.md', 'not a daily log\n')
    write(
      anima,
      'activity_log/2026-02-17.jsonl',
      [
        '{"ts":"2026-02-17T14:30:00","type":"message_received","content":"...","from":"user","channel":"chat"}',
        '{"ts":"2026-02-17T14:30:05","type":"response_sent","content":"...","to":"user","channel":"chat"}',
        '{"ts":"2026-02-17T15:00:00","type":"tool_use","tool":"web_search","summary":"検索実行"}',
      ].join('\n'),
    )
    write(anima, 'skills/web-research.md', '# Web research\nSearch, then read the top three.\n')
    write(root, 'shared/users/ada.md', '---\nname: Ada\n---\nLikes tea.\n')
    const before = hashTree(root)

    const options = { dir: anima, documents: target.backend.documents, activity: target.backend.activity, skillsDir: join(target.temp.home, 'agents/default/skills') }
    const report = await importAnimaWorks(options)
    assert.equal(hashTree(root), before)
    assert.deepEqual(report.counts.knowledge, { imported: 2, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts.procedures, { imported: 1, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts.episodes, { imported: 1, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts['activity events'], { imported: 3, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts['skill files'], { imported: 1, duplicates: 0, conflicts: 0 })
    assert.deepEqual(report.counts.users, { imported: 1, duplicates: 0, conflicts: 0 })
    assert.deepEqual(
      report.problems.map((problem) => problem.file),
      ['episodes/notes.md'],
    )
    const doc = await target.backend.documents.read('procedure', 'restart-worker')
    assert.equal(doc?.frontmatter.description, '手順の説明')
    assert.equal(doc?.frontmatter.success_count, 0)
    assert.equal(doc?.frontmatter.created_at, '2026-02-18T03:00:00+09:00')
    assert.match(doc?.body ?? '', /Restart the worker/)
    assert.equal((await target.backend.documents.read('knowledge', 'deploys'))?.frontmatter.confidence, 0.9)
    assert.equal((await target.backend.documents.read('user', 'ada'))?.body.trim(), 'Likes tea.')
    const events = await target.backend.activity.read()
    assert.deepEqual(
      events.map((event) => [event.type, event.tool ?? event.from ?? event.to]),
      [['message_received', 'user'], ['response_sent', 'user'], ['tool_use', 'web_search']],
    )

    const again = await importAnimaWorks(options)
    for (const [kind, count] of Object.entries(again.counts)) assert.equal(count.imported, 0, `${kind} imported again`)
    assert.equal(hashTree(root), before)
  })
})
