/**
 * The oldest Node.js engram runs on, and the refusal an older one gets (decision 0068).
 *
 * 22.13 is the first Node whose `node:sqlite` needs no flag (the embedded backend and the file
 * locks), and it has `module.enableCompileCache` (the CLI's start, decision 0041) and
 * `process.getBuiltinModule`. package.json's `engines` says the same (`node-version.test.ts` holds
 * them together); `engram doctor` and the refusal below read it from here.
 *
 * An older Node fails before any code of engram runs when a module links a built-in it lacks, with
 * a message about the built-in and not about Node. So no module an entry point loads links those
 * built-ins: `node:sqlite` is loaded when a database is opened (storage/node-sqlite.ts), after
 * `requireSupportedNode()`, and the binary turns on the compile cache only when Node has it.
 */
import { EngramError, ErrorCode } from './errors.ts'

/** The oldest Node.js engram supports, as package.json's `engines` gives it (`>=22.13`). */
export const MINIMUM_NODE_VERSION = '22.13'

/** How to get a newer Node, the same on every platform engram runs on. */
const HOW_TO_GET_NODE = `Install Node.js ${MINIMUM_NODE_VERSION} or newer (the current LTS release is fine) with a version manager (\`nvm install --lts\`, \`fnm install --lts\`) or the official installer from nodejs.org, then run engram with it (\`node --version\` shows which Node a shell runs).`

function numbers(version: string): number[] {
  return version
    .replace(/^v/, '')
    .split('.')
    .map((part) => Number.parseInt(part, 10) || 0)
}

/** Whether `version` (`20.20.2`, `v24.1.0`) is at least the minimum. */
function isSupportedNode(version: string): boolean {
  const found = numbers(version)
  const needed = numbers(MINIMUM_NODE_VERSION)
  for (let i = 0; i < needed.length; i++) {
    const a = found[i] ?? 0
    const b = needed[i] ?? 0
    if (a !== b) return a > b
  }
  return true
}

/** The refusal for Node `version` (default: the one running), or undefined when it is new enough. */
export function unsupportedNodeError(version: string = process.versions.node): EngramError | undefined {
  if (isSupportedNode(version)) return undefined
  return new EngramError({
    code: ErrorCode.unsupported,
    category: 'system',
    message: `Node.js ${version} (${process.execPath}) is too old: engram needs Node.js ${MINIMUM_NODE_VERSION} or newer.`,
    fix: HOW_TO_GET_NODE,
    details: { node: version, required: `>=${MINIMUM_NODE_VERSION}` },
  })
}

/** Throws the refusal (EngramError `unsupported`) when the running Node is older than engram supports. */
export function requireSupportedNode(): void {
  const error = unsupportedNodeError()
  if (error) throw error
}
