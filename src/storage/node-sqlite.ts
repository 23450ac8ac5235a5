/**
 * `node:sqlite`, loaded when a database or a lock file is opened instead of linked by an `import`
 * (decision 0068). A Node without it (before 22.5; before 22.13 without a flag) rejects a module
 * that imports it before any code runs, with "No such built-in module: node:sqlite", so
 * `import 'engram'` would fail where it should say which Node it needs. Loaded here, an old Node
 * gets that refusal (`unsupported`, naming the version found and needed) when it opens a home.
 */
import { requireSupportedNode } from '../core/node-version.ts'

/** The `node:sqlite` module; throws EngramError `unsupported` on a Node older than engram supports. */
export function nodeSqlite(): typeof import('node:sqlite') {
  requireSupportedNode()
  // Built in and already loaded after the first call: this is a lookup, not a load.
  return process.getBuiltinModule('node:sqlite')
}
