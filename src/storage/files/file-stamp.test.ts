import assert from 'node:assert/strict'
import { mkdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { makeTempHome } from '../../testing/temp-home.ts'
import { fileStamp, SETTLE_MS, sameStamp, unchanged } from './file-stamp.ts'

test('a stamp is trusted alone only once the file’s times are older than the timestamp resolution', (t) => {
  const temp = makeTempHome()
  t.after(temp.cleanup)
  const path = join(temp.home, 'x.md')
  mkdirSync(temp.home, { recursive: true })
  writeFileSync(path, 'one')
  const stat = statSync(path, { bigint: true })
  const changedMs = Number(stat.ctimeNs / 1_000_000n)
  // Read just after a change: the same stat proves nothing (a rewrite in the same tick keeps it).
  const fresh = fileStamp(stat, changedMs + 5)
  assert.equal(fresh.settled, false)
  assert.equal(sameStamp(fresh, stat), true)
  assert.equal(unchanged(fresh, stat), false)
  // Read well after: the same stat is the same bytes.
  const settled = fileStamp(stat, changedMs + SETTLE_MS + 1)
  assert.equal(unchanged(settled, stat), true)
  // Any field that moves is a change: size, times, inode.
  for (const field of ['size', 'mtimeNs', 'ctimeNs', 'ino', 'dev'] as const) {
    const moved = { ...stat, [field]: stat[field] + 1n } as typeof stat
    assert.equal(unchanged(settled, moved), false, field)
  }
})
