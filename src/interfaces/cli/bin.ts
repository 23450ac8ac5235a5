#!/usr/bin/env node
import { runCli } from './run-cli.ts'

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
