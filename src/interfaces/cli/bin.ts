#!/usr/bin/env node
// A namespace, not `import { enableCompileCache }`: a Node without it (before 22.1) would refuse to
// link this file and print its own error instead of the command line's "engram needs Node.js …"
// (runCli refuses an unsupported Node first thing, decision 0068).
import * as nodeModule from 'node:module'
import { homedir } from 'node:os'
import { isAbsolute, join } from 'node:path'

/**
 * Where Node keeps engram's compiled code: the user's own cache folder (XDG_CACHE_HOME or
 * ~/.cache, ~/Library/Caches, %LOCALAPPDATA%), which outlives a reboot and no other user writes,
 * unlike the system's temp folder Node picks by itself; that one, when no such folder is known.
 * NODE_COMPILE_CACHE, when set, is Node's to read (undefined here).
 */
function compileCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.NODE_COMPILE_CACHE) return undefined
  const xdg = env.XDG_CACHE_HOME
  if (process.platform === 'win32') return env.LOCALAPPDATA && isAbsolute(env.LOCALAPPDATA) ? join(env.LOCALAPPDATA, 'engram', 'node-compile-cache') : undefined
  let home: string
  try {
    home = homedir()
  } catch {
    home = ''
  }
  if (process.platform === 'darwin') return isAbsolute(home) ? join(home, 'Library', 'Caches', 'engram', 'node-compile-cache') : undefined
  if (xdg && isAbsolute(xdg)) return join(xdg, 'engram', 'node-compile-cache')
  return isAbsolute(home) ? join(home, '.cache', 'engram', 'node-compile-cache') : undefined
}

// Node keeps the compiled code of engram's modules and its packages in a cache and the next start
// skips compiling them: decisions 0041 and 0082 (`engram mcp` to its first answer: ~590 ms of CPU
// with the cache, ~710 without). It must be on before the modules load, so the command line is
// imported below, not at the top. A folder it cannot make or write leaves the cache off (Node's
// returned status says so); the command runs the same.
if ('enableCompileCache' in nodeModule) nodeModule.enableCompileCache(compileCacheDir(process.env))
const { runCli } = await import('./run-cli.ts')

/** How long the process may linger after its command returned (stdout drains in far less). */
const EXIT_GRACE_MS = 250

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  isTTY: Boolean(process.stdout.isTTY),
})
process.exitCode = code
// The command is done. Whatever it left pending must not keep the process alive: after a signal,
// `engram mcp` returns without waiting out background work (queued durably, it runs again on the
// next maintain), and a model call of that work could hold the event loop for its whole timeout.
setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref()
