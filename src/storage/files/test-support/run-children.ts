/** Spawns `node <script> …args` children and collects their stdout; rejects when one fails. */
import { spawn } from 'node:child_process'

export interface ChildResult {
  stdout: string
  stderr: string
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
