/** Spawns `node <script> …args` children and collects their stdout; rejects when one fails. */
import { spawn } from 'node:child_process'

export interface ChildResult {
  stdout: string
  stderr: string
}

export interface ChildOptions {
  /** The child's environment (default: this process's). */
  env?: NodeJS.ProcessEnv
}

/** A started child: `ready` when it printed `ready`, `lastLine` its last stdout line once it exited 0. */
export interface StartedChild {
  ready: Promise<void>
  lastLine: Promise<string>
}

/**
 * Starts one child; `name` labels its errors. The workers of the concurrency tests print `ready`,
 * wait for a start file, then print their result as their last line.
 */
export function startChild(script: string, args: string[], name: string, options: ChildOptions = {}): StartedChild {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(options.env ? { env: options.env } : {}) })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => {
      if (stdout.includes('ready')) resolve()
    })
    child.on('exit', (code) => reject(new Error(`${name} exited before ready (${code}): ${stderr}`)))
  })
  // A child that never says ready (runChild's) must not leave an unhandled rejection behind.
  ready.catch(() => {})
  const lastLine = new Promise<string>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => (code === 0 ? resolve(stdout.trim().split('\n').pop() ?? '') : reject(new Error(`${name} exited with ${code ?? signal}: ${stderr.slice(-3000)}`))))
  })
  return { ready, lastLine }
}

/** Runs one child to completion. */
export function runChild(script: string, args: string[]): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0) resolve({ stdout, stderr })
      else reject(new Error(`${script} exited with ${code}: ${stderr}`))
    })
  })
}
