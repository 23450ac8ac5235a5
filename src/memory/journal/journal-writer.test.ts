import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { JournalWriterIdentity } from './journal-events.ts'
import { judgeWriter, registerOpenStream, thisWriter } from './journal-writer.ts'

const CHILD = fileURLToPath(new URL('./test-support/writer-child.ts', import.meta.url))
const HAS_PROC = existsSync('/proc/self/stat')

/** A live process and the identity it reports for itself. */
async function startWriter(procRoot?: string): Promise<{ child: ChildProcess; identity: JournalWriterIdentity }> {
  const child = spawn(process.execPath, [CHILD, ...(procRoot ? [procRoot] : [])], { stdio: ['ignore', 'pipe', 'inherit'] })
  const identity = await new Promise<JournalWriterIdentity>((resolve, reject) => {
    let text = ''
    child.stdout!.on('data', (data: Buffer) => {
      text += data.toString()
      if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))) as JournalWriterIdentity)
    })
    child.on('exit', (code) => reject(new Error(`writer child exited ${code}`)))
  })
  return { child, identity }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  child.kill('SIGKILL')
  await exited
}

describe('journal writer liveness', () => {
  const children: ChildProcess[] = []
  const noProc = mkdtempSync(join(tmpdir(), 'engram-no-proc-'))
  after(async () => {
    await Promise.all(children.map(stop))
    rmSync(noProc, { recursive: true, force: true })
  })
  const fresh = { id: 'x', mtimeMs: Date.now() }

  it('a stream of this process is alive exactly while it is open here', () => {
    const self = thisWriter()
    registerOpenStream('mine', true)
    assert.equal(judgeWriter(self, { id: 'mine', mtimeMs: 0 }).alive, true, 'an old mtime does not matter while it is open')
    registerOpenStream('mine', false)
    const verdict = judgeWriter(self, { id: 'mine', mtimeMs: Date.now() })
    assert.deepEqual([verdict.alive, verdict.by], [false, 'this-process'], 'closed without finalize: an orphan, however fresh')
  })

  it('with /proc: a live writer is alive, the same pid with another start time (a reused pid) is dead, an exited one is dead', { skip: !HAS_PROC && 'no /proc on this system' }, async () => {
    const { child, identity } = await startWriter()
    children.push(child)
    assert.ok(identity.started !== undefined && identity.boot !== undefined, JSON.stringify(identity))
    // A stale heartbeat does not matter: /proc says the process runs.
    assert.deepEqual(judgeWriter(identity, { id: 'x', mtimeMs: 0 }), { alive: true, by: 'proc', reason: `process ${identity.pid} is still running` })
    const reused = judgeWriter({ ...identity, started: identity.started - 1 }, fresh)
    assert.deepEqual([reused.alive, reused.by], [false, 'proc'], reused.reason)
    assert.match(reused.reason, /now belongs to another process/)
    const rebooted = judgeWriter({ ...identity, boot: 'another-boot' }, fresh)
    assert.deepEqual([rebooted.alive, rebooted.by], [false, 'boot'])
    await stop(child)
    const exited = judgeWriter(identity, fresh)
    assert.deepEqual([exited.alive, exited.by], [false, 'proc'], exited.reason)
  })

  it('with /proc: a writer that exited but is not yet reaped by its parent (a zombie) is dead', { skip: !HAS_PROC && 'no /proc on this system' }, async () => {
    // `sleep 5` inherits the backgrounded `sleep 0.2` (which ends after the exec, so the shell
    // cannot reap it) and never reaps it: a zombie until the parent ends.
    const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'inherit'] })
    children.push(parent)
    const pid = await new Promise<number>((resolve) => parent.stdout!.once('data', (data: Buffer) => resolve(Number(data.toString().trim()))))
    let stat = ''
    for (let tries = 0; !/^\d+ \(.*\) Z /.test(stat) && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : ''
    }
    assert.match(stat, /\) Z /, 'the child became a zombie')
    const started = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3])
    const verdict = judgeWriter({ ...thisWriter(), pid, started }, fresh)
    assert.deepEqual([verdict.alive, verdict.by], [false, 'proc'], verdict.reason)
    assert.match(verdict.reason, /not yet reaped/)
  })

  it('another host or another PID namespace is judged by the heartbeat', () => {
    const self = thisWriter()
    const elsewhere = { ...self, host: `${self.host}-other` }
    assert.equal(judgeWriter(elsewhere, fresh).alive, true)
    assert.equal(judgeWriter(elsewhere, { id: 'x', mtimeMs: Date.now() - 6 * 60_000 }).alive, false, 'untouched for 6 minutes: dead')
    assert.equal(judgeWriter(elsewhere, { id: 'x', mtimeMs: Date.now() - 30_000 }, { staleMs: 20_000 }).alive, false)
    if (self.pidns) {
      const container = judgeWriter({ ...self, pid: 1, pidns: 'pid:[1]' }, fresh)
      assert.deepEqual([container.alive, container.by], [true, 'heartbeat'], 'pid 1 here says nothing about pid 1 in another namespace')
    }
  })

  it('without /proc: no process with the pid is dead; a pid that exists waits for the heartbeat to go stale', async () => {
    const { child, identity } = await startWriter(noProc)
    children.push(child)
    assert.equal(identity.started, undefined)
    const options = { procRoot: noProc }
    const live = judgeWriter(identity, fresh, options)
    assert.deepEqual([live.alive, live.by], [true, 'heartbeat'])
    // A reused pid cannot be told apart without /proc: the conservative answer is "alive" until
    // the file has not been touched for the stale time.
    assert.equal(judgeWriter(identity, { id: 'x', mtimeMs: Date.now() - 6 * 60_000 }, options).alive, false)
    await stop(child)
    const gone = judgeWriter(identity, fresh, options)
    assert.deepEqual([gone.alive, gone.by], [false, 'signal'], gone.reason)
  })

  it('a journal that does not name its writer is judged by the heartbeat', () => {
    assert.equal(judgeWriter(undefined, fresh).alive, true, 'a start line being written right now')
    assert.equal(judgeWriter(undefined, { id: 'x', mtimeMs: Date.now() - 10 * 60_000 }).alive, false)
  })
})
