/**
 * One memory for many agents on many hosts (decision 0037): agent processes that share nothing but the
 * database URL — each has its own home and its own temp folder, as processes on different hosts
 * would — open their minds with `createMind` on the same PostgreSQL schema and work at once.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { checkContextConsistency } from '../src/memory/context/consistency.ts'
import { checkContention, runMemorizers } from '../src/memory/engrams/test-support/memorize-contention.ts'
import { exportMemory } from '../src/memory/portability/export-memory.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { dropPostgresSchema } from '../src/storage/postgres/connection.ts'
import { startChild } from '../src/storage/files/test-support/run-children.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const SUPPORT = join(import.meta.dirname, 'support')

/** A "host": a home and a temp folder of its own, and the environment that points it at the shared schema. */
function host(temp: TempHome, name: string, url: string, schema: string): { home: string; env: Record<string, string> } {
  const root = join(temp.home, '..', 'hosts', name)
  const tmp = join(root, 'tmp')
  mkdirSync(tmp, { recursive: true })
  return { home: join(root, 'home'), env: { ...temp.env, TMPDIR: tmp, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema } }
}

/** Runs a child script of test/support; resolves with its last stdout line parsed as JSON (rejects on a non-zero exit). */
async function runChild<T>(script: string, args: string[], env: Record<string, string>): Promise<T> {
  return JSON.parse((await startChild(join(SUPPORT, script), args, `${script} ${args.join(' ')}`, { env }).lastLine) || '{}') as T
}

async function openHost(temp: TempHome, name: string, url: string, schema: string): Promise<Mind> {
  const { home, env } = host(temp, name, url, schema)
  return createMind({ home, env, ignoreConfigFile: true, reindexOnOpen: false })
}


onPostgres('many hosts on one database', (url) => {
  describe('many hosts on one database', () => {
    test('8 processes, each with its own home, memorize 200 distinct lessons at once: exactly 1,600, each once', { timeout: 300_000 }, async () => {
      const temp = makeTempHome('engram-hosts-')
      const schema = freshSchema()
      // Migrate once, so that the processes race only on memory (each would wait for the migration lock otherwise).
      const observer = await openHost(temp, 'observer', url, schema)
      try {
        const tallies = await Promise.all(
          Array.from({ length: 8 }, (_, worker) => {
            const { home, env } = host(temp, `w${worker}`, url, schema)
            return runChild<{ saved: number; duplicates: number; rejected: number; reasons: string[] }>('pg-memorize-lessons.ts', [home, String(worker), '200'], env)
          }),
        )
        assert.equal(tallies.reduce((sum, t) => sum + t.rejected, 0), 0, tallies.flatMap((t) => t.reasons).join('\n'))
        assert.equal(tallies.reduce((sum, t) => sum + t.saved, 0), 1600)
        const { entries, problems } = (await observer.backend.engrams('global')?.read('lessons')) ?? { entries: [], problems: [] }
        assert.deepEqual(problems, [])
        const refs = entries.map((entry) => /^ref-(w\d+-m\d+):/.exec(entry.text)?.[1]).filter((ref): ref is string => ref !== undefined)
        assert.equal(refs.length, 1600, 'every lesson stored')
        assert.equal(new Set(refs).size, 1600, 'each once')
        // Another process sees them in its recall too (the index is shared).
        await observer.reindex()
        const found = await observer.retriever.search('invoices of batch 123 from host 5', { kinds: ['lesson'], limit: 5 })
        assert.match(found.hits[0]?.unit.text ?? '', /ref-w5-m123:/)
      } finally {
        await observer.close()
        await dropPostgresSchema(url, schema)
        temp.cleanup()
      }
    })

    test('the robustness concurrency test on PostgreSQL: 8 hosts, three users and the agent, texts every host saves too — each stored once in its owner’s tree', { timeout: 300_000 }, async () => {
      const temp = makeTempHome('engram-hosts-')
      const schema = freshSchema()
      const observer = await openHost(temp, 'observer', url, schema)
      try {
        // memorize-contention's scenario (decision 0027), each worker a host of its own; the files it checks are the export of the database.
        const options = { home: temp.home, env: temp.env, workers: 8, count: 200, how: 'in-flight', owners: 'users', sharedEvery: 10, hostOf: (worker: number) => host(temp, `m${worker}`, url, schema) } as const
        const { tallies } = await runMemorizers(options)
        const exported = join(temp.home, '..', 'export')
        await exportMemory({ backend: observer.backend, agent: observer.agent, clock: observer.clock, version: 'test' }, exported)
        const check = checkContention(exported, options, tallies)
        assert.equal(check.rejected, 0, tallies.flatMap((tally) => tally.reasons).join('\n'))
        assert.equal(check.texts, 1600 - 7 * 20)
        assert.equal(check.saved, check.texts)
        assert.equal(check.duplicates, 7 * 20)
        assert.deepEqual(check.lost, [], 'texts reported saved but missing')
        assert.deepEqual(check.misplaced, [], 'texts stored twice or in the wrong tree')
        assert.deepEqual(check.dishonest, [], 'reports that disagree with the store')
        assert.deepEqual(check.problems, [])
        assert.equal(check.storedOnce, check.texts)
      } finally {
        await observer.close()
        await dropPostgresSchema(url, schema)
        temp.cleanup()
      }
    })

    test('4 processes append to one conversation at once while compacting it: every message once, positions unique, the DAG consistent', { timeout: 300_000 }, async () => {
      const temp = makeTempHome('engram-hosts-')
      const schema = freshSchema()
      const observer = await openHost(temp, 'observer', url, schema)
      try {
        const results = await Promise.all(
          Array.from({ length: 4 }, (_, worker) => {
            const { home, env } = host(temp, `a${worker}`, url, schema)
            return runChild<{ worker: number; stored: number[]; compactions: number }>('pg-append-child.ts', [home, String(worker), '100'], env)
          }),
        )
        const conversation = await observer.backend.context.findConversation('one-conversation', observer.agent)
        assert.ok(conversation, 'the conversation exists once')
        assert.equal((await observer.backend.context.listConversations(observer.agent)).length, 1)
        const messages = await observer.backend.context.messages(conversation.id)
        assert.equal(messages.length, 400, 'every message stored')
        assert.equal(new Set(messages.map((m) => m.content)).size, 400, 'each once')
        assert.deepEqual(
          messages.map((m) => m.seq),
          Array.from({ length: 400 }, (_, i) => i + 1),
          'seq numbers unique and gap-free',
        )
        const ids = results.flatMap((r) => r.stored)
        assert.equal(new Set(ids).size, 400, 'each process got its own ids')
        // Each process's messages keep their order.
        for (const result of results) {
          const mine = messages.filter((m) => m.content.startsWith(`w${result.worker}-m`)).map((m) => Number(/^w\d+-m(\d+):/.exec(m.content)?.[1]))
          assert.deepEqual(mine, [...mine].sort((a, b) => a - b))
        }
        assert.ok(
          results.some((r) => r.compactions > 0),
          'compaction ran while others appended',
        )
        const report = await checkContextConsistency(observer.backend.context, conversation.id)
        assert.deepEqual(report.problems, [])
        assert.ok(report.ok)
        assert.equal(report.messages, 400)
        assert.ok(report.summaries > 0)
      } finally {
        await observer.close()
        await dropPostgresSchema(url, schema)
        temp.cleanup()
      }
    })

    test('what one process memorizes, another process primes within a second', { timeout: 120_000 }, async () => {
      const temp = makeTempHome('engram-hosts-')
      const schema = freshSchema()
      const reader = await openHost(temp, 'reader', url, schema)
      const lesson = 'The quarterly zeppelin audit needs the hangar ledger signed by Ottoline'
      const { home, env } = host(temp, 'writer', url, schema)
      const writer = spawn(process.execPath, [join(SUPPORT, 'pg-memorize-one.ts'), home, lesson], { env, stdio: ['pipe', 'pipe', 'pipe'] })
      let stderr = ''
      writer.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      try {
        const lines: string[] = []
        let wake: (() => void) | undefined
        writer.stdout.on('data', (chunk: Buffer) => {
          lines.push(...chunk.toString().split('\n').filter((line) => line.trim() !== ''))
          wake?.()
        })
        const nextLine = async (): Promise<string> => {
          while (lines.length === 0) {
            await new Promise<void>((resolve, reject) => {
              wake = resolve
              writer.once('exit', (code) => reject(new Error(`writer exited with ${code}: ${stderr.slice(-3000)}`)))
            })
          }
          return lines.shift() as string
        }
        assert.equal(await nextLine(), 'ready')
        const question = 'who signs the hangar ledger for the zeppelin audit?'
        const before = await reader.primer.prime({ message: question, budget: 2000 })
        assert.doesNotMatch(before.text, /Ottoline/, 'not known before it is memorized')
        writer.stdin.write('go\n')
        const { savedAt, report } = JSON.parse(await nextLine()) as { savedAt: number; report: { saved: unknown[] } }
        assert.equal(report.saved.length, 1)
        let primedAt: number | undefined
        while (Date.now() - savedAt < 5_000) {
          const primed = await reader.primer.prime({ message: question, budget: 2000 })
          if (/Ottoline/.test(primed.text)) {
            primedAt = Date.now()
            break
          }
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        assert.ok(primedAt !== undefined, 'the other process primed the lesson')
        assert.ok(primedAt - savedAt <= 1_000, `primed ${primedAt - savedAt} ms after it was saved (goal: within a second)`)
      } finally {
        writer.kill()
        await reader.close()
        await dropPostgresSchema(url, schema)
        temp.cleanup()
      }
    })
  })
})
