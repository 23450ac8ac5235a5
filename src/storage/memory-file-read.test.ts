import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { makeTempHome } from '../testing/temp-home.ts'
import { checkMemoryFile, readMemoryFile } from './memory-file-read.ts'

function setup() {
  const temp = makeTempHome()
  const root = join(temp.home, 'knowledge')
  const outside = join(temp.home, 'outside')
  mkdirSync(root, { recursive: true })
  mkdirSync(outside, { recursive: true })
  writeFileSync(join(outside, 'secret.md'), 'outside secret\n')
  return { temp, root, outside, limits: { root, maxBytes: 1024 } }
}

describe('reading a memory file that anyone may have put there', () => {
  test('a regular file is read, a missing one is missing', async () => {
    const { temp, root, limits } = setup()
    try {
      writeFileSync(join(root, 'tea.md'), 'green\n')
      const read = await readMemoryFile(join(root, 'tea.md'), limits)
      assert.equal(read.kind === 'read' && read.bytes.toString(), 'green\n')
      assert.deepEqual(await readMemoryFile(join(root, 'none.md'), limits), { kind: 'missing' })
    } finally {
      temp.cleanup()
    }
  })

  test('folders, named pipes, link loops, dangling links and oversized files are skipped with a reason, never read', async () => {
    const { temp, root, limits } = setup()
    try {
      mkdirSync(join(root, 'notes.md'))
      execFileSync('mkfifo', [join(root, 'pipe.md')])
      symlinkSync('loop.md', join(root, 'loop.md'))
      symlinkSync('nothing-here.md', join(root, 'dangling.md'))
      writeFileSync(join(root, 'big.md'), 'x'.repeat(2048))
      const reasons: Record<string, string> = {}
      for (const name of ['notes.md', 'pipe.md', 'loop.md', 'dangling.md', 'big.md']) {
        const read = await readMemoryFile(join(root, name), limits)
        assert.equal(read.kind, 'skipped', name)
        reasons[name] = read.kind === 'skipped' ? read.reason : ''
        assert.deepEqual(checkMemoryFile(join(root, name), limits), read, `${name}: the check before the read agrees`)
      }
      assert.deepEqual(reasons, {
        'notes.md': 'a folder, not a file',
        'pipe.md': 'a named pipe, not a file',
        'loop.md': 'a symbolic link loop',
        'dangling.md': 'a symbolic link to nothing',
        'big.md': '2048 bytes, larger than memory.maxFileBytes (1024); not read — split the file, or raise ENGRAM_MEMORY_MAX_FILE_BYTES',
      })
    } finally {
      temp.cleanup()
    }
  })

  test('links are confined to the real path of their root: inside is read, outside never is', async () => {
    const { temp, root, outside, limits } = setup()
    try {
      writeFileSync(join(root, 'tea.md'), 'green\n')
      symlinkSync(join(root, 'tea.md'), join(root, 'alias.md'))
      symlinkSync(join(outside, 'secret.md'), join(root, 'secret.md'))
      symlinkSync('../outside/secret.md', join(root, 'relative.md'))
      assert.equal((await readMemoryFile(join(root, 'alias.md'), limits)).kind, 'read')
      for (const name of ['secret.md', 'relative.md']) {
        assert.deepEqual(await readMemoryFile(join(root, name), limits), { kind: 'skipped', reason: 'a symbolic link that leads outside its memory folder' })
      }
      // A folder on the way that is a link out (topics/ → elsewhere) is outside too.
      const memory = join(temp.home, 'memory')
      mkdirSync(memory)
      symlinkSync(outside, join(memory, 'topics'))
      assert.equal((await readMemoryFile(join(memory, 'topics', 'secret.md'), { root: memory, maxBytes: 1024 })).kind, 'skipped')
      // The whole root linked elsewhere is the user's choice: its files are read.
      const linkedRoot = join(temp.home, 'linked')
      symlinkSync(outside, linkedRoot)
      assert.equal((await readMemoryFile(join(linkedRoot, 'secret.md'), { root: linkedRoot, maxBytes: 1024 })).kind, 'read')
      assert.equal(checkMemoryFile(join(linkedRoot, 'secret.md'), { root: linkedRoot, maxBytes: 1024 }).kind, 'file')
    } finally {
      temp.cleanup()
    }
  })
})
