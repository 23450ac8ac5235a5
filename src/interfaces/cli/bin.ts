#!/usr/bin/env node
// A namespace, not `import { enableCompileCache }`: a Node without it (before 22.1) would refuse to
// link this file and print its own error instead of the command line's "engram needs Node.js …"
// (runCli refuses an unsupported Node first thing, decision 0068).
import * as nodeModule from 'node:module'

// Node keeps the compiled code of engram's modules and its packages in a cache (the system's temp
// folder, or NODE_COMPILE_CACHE) and the next start skips compiling them: decision 0041. It must
// be on before the modules load, so the command line is imported below, not at the top.
if ('enableCompileCache' in nodeModule) nodeModule.enableCompileCache()
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
