/**
 * A child process for the bounded-work tests and bench: an agent process whose user sends one very
 * long message. It opens the mind, prints `{"begin":true}`, runs `session.begin` with a message of
 * SIZE characters (KIND `nospace`: random letters, no space; `spaces`: words), then prints
 * `{"stored":…,"ms":…,"maxRssMB":…,"blockedMs":…,"units":…}` (the longest the event loop was held;
 * the message units in the index) — or `{"refused":…}` when the message is over
 * limits.messageChars — and closes the mind. The tests send it SIGTERM in the middle of `begin`.
 *
 * Usage: node long-message-turn.ts HOME SIZE KIND [LIMIT]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { describeError } from '../../src/core/errors.ts'
import { openMindInternals } from '../../src/mind-internals.ts'

const [home, sizeArg, kind, limitArg] = process.argv.slice(2)
if (!home || !sizeArg || (kind !== 'nospace' && kind !== 'spaces')) throw new Error('usage: long-message-turn.ts HOME SIZE nospace|spaces [LIMIT]')
const size = Number(sizeArg)
const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}

/** SIZE characters built in one buffer (no array of ten million strings). */
function longText(): string {
  const bytes = Buffer.allocUnsafe(size)
  let state = 12345
  const words = ['deploy', 'ledger', 'invoice', 'staging', 'vault', 'migration', 'Paris', 'refund', 'budget', 'report']
  let at = 0
  while (at < size) {
    state = (state * 1_103_515_245 + 12_345) >>> 0
    if (kind === 'nospace') {
      bytes[at++] = 97 + ((state >>> 16) % 26)
    } else {
      const word = words[(state >>> 16) % words.length] as string
      for (let i = 0; i < word.length && at < size; i++) bytes[at++] = word.charCodeAt(i)
      if (at < size) bytes[at++] = 32
    }
  }
  return bytes.toString('latin1')
}

const settings = limitArg === undefined ? {} : { 'limits.messageChars': Number(limitArg) }
const mind = await openMindInternals({ home, env: { ENGRAM_EMBED_MODEL: 'hash-v1' }, ignoreConfigFile: true, settings })
const session = mind.session('long', { user: 'ada' })
await session.begin('Here comes the log.')
const text = longText()
// The least any store of it costs: every character read twice (as JSON, as UTF-8 bytes).
const floor = performance.now()
const baselineBytes = JSON.stringify(text).length + Buffer.byteLength(text, 'utf8')
const baselineMs = Math.round(performance.now() - floor)
print({ begin: true, baselineMs, baselineBytes, rssBeforeMB: Math.round(process.memoryUsage().rss / 1_048_576) })
const blocked = monitorEventLoopDelay({ resolution: 5 })
blocked.enable()
const started = performance.now()
try {
  const turn = await session.begin(text)
  blocked.disable()
  const ms = Math.round(performance.now() - started)
  const units = (await mind.backend.index.count()).message
  print({ stored: turn.messageId, ms, maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024), blockedMs: Math.round(blocked.max / 1e6), units })
} catch (error) {
  // What a person reads of it: the message, then its fix (decision 0062 keeps them apart on the error).
  print({ refused: (error as { code?: string }).code, message: describeError(error), ms: Math.round(performance.now() - started) })
}
await mind.close()
print({ closed: true })
