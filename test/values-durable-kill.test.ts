// @slow: kills child processes at random points of a record
/**
 * A changed value recorded through `mind.memories.add({ messages })` (decision 0087), and a process
 * killed while recording it. The pair is one unit (decision 0053's plan, applied idempotently, the
 * newer document written before the older names it): whenever the kill lands, no `superseded_by`
 * names a document that is not there; the next process's first `maintain()` finishes a plan left
 * behind, and the caller's retry of the same call (a duplicate now) records the change once.
 * The assistant's words are never read as a value, and Bob's facts are never compared with Ada's.
 * The record through `add` runs on both backends; the kills on the embedded home, where the plan
 * is a file the test can watch for (PostgreSQL writes each document in one transaction, 0053).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind } from '../src/mind.ts'
import type { Backend } from '../src/storage/contracts.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { seededRandom } from '../src/test-support/seeded-random.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const EARLIER = [{ role: 'user', content: 'We switched the orders database to MySQL.', at: '2026-03-02T10:00:00Z' }]
const LATER = [
  { role: 'assistant', content: 'You could also move the orders database to SQLite.', at: '2026-04-10T10:00:00Z' },
  { role: 'user', content: 'We switched the orders database from MySQL to PostgreSQL.', at: '2026-04-10T10:05:00Z' },
]

const CHILD = `
import { createMind } from ${JSON.stringify(resolve('src/mind.ts'))}
import { ManualClock } from ${JSON.stringify(resolve('src/core/clock.ts'))}
const mind = await createMind({ home: process.env.ENGRAM_HOME, env: process.env, ignoreConfigFile: true, clock: new ManualClock('2026-04-10T11:00:00Z') })
process.stdout.write('ready\\n')
const started = performance.now()
await mind.memories.add({ messages: ${JSON.stringify(LATER)}, user: 'ada' })
process.stdout.write('done ' + (performance.now() - started) + '\\n')
await mind.close()
`

type Docs = Map<string, { frontmatter: Record<string, unknown>; body: string }>

async function knowledge(backend: Backend, user: string): Promise<Docs> {
  const documents = backend.owned(`user:${user}`).documents
  const docs: Docs = new Map()
  for (const ref of await documents.list('knowledge')) {
    const doc = await documents.read('knowledge', ref.slug)
    if (doc) docs.set(ref.slug, doc)
  }
  return docs
}

const dangling = (docs: Docs): string[] => [...docs.entries()].filter(([, doc]) => typeof doc.frontmatter.superseded_by === 'string' && !docs.has(doc.frontmatter.superseded_by)).map(([slug]) => slug)

/** A home where Ada and Bob each said which database the orders use. */
async function seeded(home: string, env: NodeJS.ProcessEnv): Promise<void> {
  const mind = await createMind({ home, env, ignoreConfigFile: true, clock: new ManualClock('2026-03-02T11:00:00Z') })
  await mind.memories.add({ messages: EARLIER, user: 'ada' })
  await mind.memories.add({ messages: EARLIER, user: 'bob' })
  await mind.close()
}

/** Ada's state folder in an embedded home (found from her lessons file), where a unit's plan is stored. */
function adaStateDir(home: string): string {
  const find = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name === 'ada' && existsSync(join(path, 'memory', 'lessons.md'))) return path
        const found = find(path)
        if (found) return found
      }
    }
    return undefined
  }
  const tree = find(home)
  assert.ok(tree, 'Ada has a tree')
  return join(tree, 'state')
}

/**
 * Runs the child; kills it `kill.afterMs` after it is ready, or, with `kill.planIn`, that long
 * after a plan appears in that folder (never when `kill` is undefined). Returns its time to record, when it finished.
 */
function runChild(script: string, env: NodeJS.ProcessEnv, kill?: { afterMs: number; planIn?: string }): Promise<number | undefined> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let watching: NodeJS.Timeout | undefined
    const planSeen = (dir: string): boolean => existsSync(dir) && readdirSync(dir).some((name) => name.startsWith('consolidation-plan'))
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (kill === undefined || !out.includes('ready') || watching !== undefined || child.killed) return
      if (kill.planIn === undefined) watching = setTimeout(() => child.kill('SIGKILL'), kill.afterMs)
      else {
        const dir = kill.planIn
        watching = setInterval(() => {
          if (!planSeen(dir)) return
          clearInterval(watching)
          setTimeout(() => child.kill('SIGKILL'), kill.afterMs)
        }, 1)
      }
    })
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.on('error', fail)
    child.on('exit', (code, signal) => {
      clearInterval(watching)
      const finished = /done ([\d.]+)/.exec(out)
      if (signal === 'SIGKILL') done(finished ? Number(finished[1]) : undefined)
      else if (code === 0) done(finished ? Number(finished[1]) : undefined)
      else fail(new Error(`child exited ${code}: ${err}`))
    })
  })
}

async function recordedThroughAdd(t: test.TestContext, home: string, env: NodeJS.ProcessEnv): Promise<void> {
  await seeded(home, env)
  const mind = await createMind({ home, env, ignoreConfigFile: true, clock: new ManualClock('2026-04-10T11:00:00Z') })
  t.after(() => mind.close())
  await mind.memories.add({ messages: LATER, user: 'ada' })
  const backend = (mind as unknown as { backend: Backend }).backend
  const ada = await knowledge(backend, 'ada')
  assert.equal(ada.size, 2, [...ada.keys()].join(', '))
  const newer = [...ada.values()].find((doc) => doc.frontmatter.supersedes !== undefined)
  assert.match(newer?.body ?? '', /from MySQL to PostgreSQL/)
  assert.equal(newer?.frontmatter.valid_from, '2026-04-10T10:05:00.000Z', 'dated by the message that said it')
  const older = ada.get(String(newer?.frontmatter.supersedes))
  assert.match(older?.body ?? '', /to MySQL\./)
  assert.equal(older?.frontmatter.valid_until, '2026-04-10T10:05:00.000Z')
  assert.ok(![...ada.values()].some((doc) => doc.body.includes('SQLite')), 'what the assistant said is no value of the user')
  assert.equal((await knowledge(backend, 'bob')).size, 0)
  // Said again, the same value records nothing more.
  await mind.memories.add({ messages: LATER, user: 'ada' })
  assert.equal((await knowledge(backend, 'ada')).size, 2)
}

test('a change given to mind.memories.add is recorded as a pair; the assistant is not read; Bob is untouched', async (t) => {
  const temp = makeTempHome('engram-values-add-')
  t.after(temp.cleanup)
  await recordedThroughAdd(t, temp.home, temp.env)
})

onPostgres('a change given to mind.memories.add', (url) => {
  test('a change given to mind.memories.add is recorded as a pair on PostgreSQL; the assistant is not read; Bob is untouched', async (t) => {
    const temp = makeTempHome('engram-values-add-pg-')
    const schema = freshSchema()
    t.after(async () => {
      await dropSchema(url, schema)
      temp.cleanup()
    })
    await recordedThroughAdd(t, temp.home, { ...temp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema })
  })
})

test('killed while recording a change: no superseded_by names a missing document; the next maintain() and the retry record it once', async (t) => {
  const random = seededRandom(87)
  const timing = makeTempHome('engram-values-kill-timing-')
  t.after(timing.cleanup)
  await seeded(timing.home, timing.env)
  const script = join(timing.home, '..', 'child.ts')
  writeFileSync(script, CHILD)
  const took = await runChild(script, { ...timing.env, ENGRAM_HOME: timing.home })
  assert.ok(took !== undefined)
  const trials = 6
  let cut = 0
  let half = 0
  for (let trial = 0; trial < trials; trial++) {
    const temp = makeTempHome(`engram-values-kill-${trial}-`)
    t.after(temp.cleanup)
    await seeded(temp.home, temp.env)
    const childScript = join(temp.home, '..', 'child.ts')
    writeFileSync(childScript, CHILD)
    // Half the kills at a random time of the call, half within a few milliseconds of its plan being stored.
    const kill = trial % 2 === 0 ? { afterMs: random() * (took as number) * 1.5 } : { afterMs: random() * 8, planIn: adaStateDir(temp.home) }
    const finished = await runChild(childScript, { ...temp.env, ENGRAM_HOME: temp.home }, kill)
    const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock: new ManualClock('2026-04-10T12:00:00Z') })
    try {
      const backend = (mind as unknown as { backend: Backend }).backend
      const before = await knowledge(backend, 'ada')
      assert.deepEqual(dangling(before), [], `trial ${trial}: no superseded_by names a missing document`)
      const planLeft = (await backend.owned('user:ada').documents.read('state', 'consolidation-plan')) !== null
      if (finished === undefined && planLeft) cut++
      if (before.size === 1) half++
      await mind.maintain()
      await mind.memories.add({ messages: LATER, user: 'ada' })
      const after = await knowledge(backend, 'ada')
      assert.equal(after.size, 2, `trial ${trial}: ${[...after.keys()].join(', ')}`)
      assert.deepEqual(dangling(after), [])
      const newer = [...after.values()].find((doc) => doc.frontmatter.supersedes !== undefined)
      assert.equal(after.get(String(newer?.frontmatter.supersedes))?.frontmatter.superseded_by, [...after.entries()].find(([, doc]) => doc === newer)?.[0])
      assert.equal(await backend.owned('user:ada').documents.read('state', 'consolidation-plan'), null, 'no plan left')
      assert.equal((await knowledge(backend, 'bob')).size, 0)
    } finally {
      await mind.close()
    }
  }
  t.diagnostic(`${trials} kills over ${Math.round(took as number)} ms of recording; ${cut} left a plan for recovery, ${half} with one of its two documents written`)
})
