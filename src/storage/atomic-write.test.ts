import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, statSync, chmodSync, utimesSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { describe, test } from 'node:test'
import { makeTempHome } from '../testing/temp-home.ts'
import { appendLine, isTempFileName, tempPathFor, writeFileAtomic } from './atomic-write.ts'
import { runChild } from './files/test-support/run-children.ts'

const APPEND_LINES = join(import.meta.dirname, 'files', 'test-support', 'append-lines.ts')

describe('writeFileAtomic', () => {
  test('creates folders, replaces the file, leaves no temp file, keeps the mode', async () => {
    const temp = makeTempHome()
    try {
      const path = join(temp.home, 'a', 'b', 'file.md')
      await writeFileAtomic(path, 'one\n')
      assert.equal(readFileSync(path, 'utf8'), 'one\n')
      chmodSync(path, 0o600)
      await writeFileAtomic(path, new TextEncoder().encode('two\n'))
      assert.equal(readFileSync(path, 'utf8'), 'two\n')
      assert.equal(statSync(path).mode & 0o777, 0o600)
      assert.deepEqual(readdirSync(join(temp.home, 'a', 'b')), ['file.md'])
    } finally {
      temp.cleanup()
    }
  })

  test('concurrent writers: the file is always one whole version', async () => {
    const temp = makeTempHome()
    try {
      const path = join(temp.home, 'race.txt')
      const versions = Array.from({ length: 20 }, (_, i) => `${String(i).repeat(10_000)}\n`)
      await Promise.all(versions.map((text) => writeFileAtomic(path, text)))
      assert.ok(versions.includes(readFileSync(path, 'utf8')))
      assert.deepEqual(readdirSync(temp.home).filter(isTempFileName), [])
    } finally {
      temp.cleanup()
    }
  })

  test('a failed write leaves the old file and no temp file', async () => {
    const temp = makeTempHome()
    try {
      const path = join(temp.home, 'target')
      mkdirSync(path, { recursive: true })
      writeFileSync(join(path, 'inside'), 'x')
      // Renaming a file over a non-empty folder fails.
      await assert.rejects(writeFileAtomic(path, 'data'))
      assert.deepEqual(readdirSync(temp.home), ['target'])
    } finally {
      temp.cleanup()
    }
  })
})

describe('temp files of dead writers', () => {
  test('the next write of a file removes the temp files its dead writers left, never a live writer’s', async () => {
    const temp = makeTempHome()
    try {
      const folder = join(temp.home, 'memory')
      const path = join(folder, 'rules.md')
      mkdirSync(folder, { recursive: true })
      // A process that has exited: its pid names a writer that is certainly gone.
      const deadPid = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).toString())
      const dead = tempPathFor(path, deadPid)
      const live = tempPathFor(path)
      const otherFile = tempPathFor(join(folder, 'lessons.md'), deadPid)
      // Names this host's check cannot judge: another host's writer, and the names of older versions.
      const otherHost = join(folder, `.rules.md.${deadPid}-${'0'.repeat(6)}.0a1b2c.tmp`)
      const oldName = join(folder, `.rules.md.${deadPid}.0a1b2c3d4e5f.tmp`)
      const oldNameAbandoned = join(folder, `.rules.md.${deadPid}.abcdefabcdef.tmp`)
      for (const file of [dead, live, otherFile, otherHost, oldName, oldNameAbandoned]) writeFileSync(file, 'half written')
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000)
      utimesSync(oldNameAbandoned, twoHoursAgo, twoHoursAgo)

      await writeFileAtomic(path, '# Rules\n')
      const left = readdirSync(folder).sort()
      assert.ok(!left.includes(basename(dead)), 'a dead writer’s temp file is removed')
      assert.ok(!left.includes(basename(oldNameAbandoned)), 'a temp file older than an hour is removed')
      assert.ok(left.includes(basename(live)), 'a running writer’s temp file is kept')
      assert.ok(left.includes(basename(otherFile)), 'another file’s temp files wait for that file’s writer')
      assert.ok(left.includes(basename(otherHost)), 'another host’s young temp file is kept')
      assert.ok(left.includes(basename(oldName)), 'a young temp file without a host is kept')
      assert.equal(readFileSync(path, 'utf8'), '# Rules\n')
    } finally {
      temp.cleanup()
    }
  })
})

describe('appendLine', () => {
  test('appends whole lines and repairs a missing final newline', async () => {
    const temp = makeTempHome()
    try {
      const path = join(temp.home, 'log', 'x.jsonl')
      await appendLine(path, 'one')
      writeFileSync(path, 'one\ncut-off', { flag: 'w' })
      await appendLine(path, 'two')
      assert.equal(readFileSync(path, 'utf8'), 'one\ncut-off\ntwo\n')
      await assert.rejects(appendLine(path, 'a\nb'), { code: 'invalid_argument' })
    } finally {
      temp.cleanup()
    }
  })

  test('4 processes appending long lines at once never interleave', async () => {
    const temp = makeTempHome()
    try {
      const path = join(temp.home, 'shared.jsonl')
      const workers = 4
      const count = 150
      await Promise.all(Array.from({ length: workers }, (_, w) => runChild(APPEND_LINES, [path, String(w), String(count)])))
      const text = readFileSync(path, 'utf8')
      assert.ok(text.endsWith('\n'))
      // A rare blank line is allowed (see endsMidLine); a partial or merged line is not.
      const lines = text.split('\n').filter((line) => line.length > 0)
      assert.equal(lines.length, workers * count)
      const seen = new Set<string>()
      for (const line of lines) {
        const record = JSON.parse(line) as { worker: string; i: number; padding: string }
        assert.equal(record.padding.length, 6000)
        seen.add(`${record.worker}:${record.i}`)
      }
      assert.equal(seen.size, workers * count)
    } finally {
      temp.cleanup()
    }
  })
})
