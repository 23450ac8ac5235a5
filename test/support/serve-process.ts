/**
 * The real `engram serve` in a child process, for the tests and the bench that go through a socket:
 * started on a home with `--port 0 --json`, its address read from the first stdout line, stopped
 * by a signal with its exit code and stderr. A watchdog kills it if it outlives `killAfterMs`, so
 * a test can never hang on it.
 */
import { spawn } from 'node:child_process'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '../..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

export interface ServeProcess {
  /** `http://127.0.0.1:PORT` */
  address: string
  /** The dashboard's address as printed at start (with `?token=` on a server without tokens). */
  dashboard: string
  /** The whole start-up line (`--json`): `listening`, `agent`, `dashboard`, `tokens`, and a `note` on a server without tokens. */
  started: Record<string, unknown>
  pid: number
  /** Sends the signal and resolves with the exit code (null when killed) once the process ended. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  /** Resolves with the exit code when the process ends, however it ends. */
  exited: Promise<number | null>
  /** What it wrote to stderr so far. */
  stderr(): string
}

export async function startServe(options: { home: string; env: Record<string, string | undefined>; killAfterMs?: number; args?: string[]; onSpawn?: (pid: number) => void }): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, 'serve', '--home', options.home, '--port', '0', '--json', ...(options.args ?? [])], { stdio: ['ignore', 'pipe', 'pipe'], env: options.env, cwd: root })
  if (child.pid !== undefined) options.onSpawn?.(child.pid)
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  const watchdog = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 120_000)
  watchdog.unref()
  void exited.then(() => clearTimeout(watchdog))
  const started = await new Promise<{ listening: string; dashboard: string } & Record<string, unknown>>((done, fail) => {
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const line = out.split('\n').find((candidate) => candidate.includes('"listening"'))
      if (line) done(JSON.parse(line) as { listening: string; dashboard: string } & Record<string, unknown>)
    })
    // With --json a process's failure is its JSON envelope on stdout, a forked process's too
    // (they share the pipes), so both are shown: stderr alone once left such a failure unexplained.
    child.once('close', (code, signal) => fail(new Error(`engram serve exited ${code ?? signal} before listening:\nstderr: ${stderr}\nstdout: ${out}`)))
  })
  return {
    address: started.listening,
    dashboard: started.dashboard,
    started,
    pid: child.pid ?? -1,
    exited,
    stderr: () => stderr,
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}
