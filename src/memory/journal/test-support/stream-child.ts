/**
 * Test helper run as a child process: streams text into a journal until it is killed, and reports
 * each chunk it handed to `writeText` on stdout as `{"n":…,"at":<epoch ms>,"chunk":"…"}`.
 * Usage: node stream-child.ts <journal dir> <chunk interval ms>
 */
import { systemClock } from '../../../core/clock.ts'
import { createJournals } from '../journal-folder.ts'

const [dir, intervalArg] = process.argv.slice(2)
if (!dir) throw new Error('usage: stream-child.ts <journal dir> [interval ms]')
const interval = Number(intervalArg ?? 15)
const journals = createJournals({ dir, clock: systemClock, onError: (error: unknown) => process.stderr.write(`${String(error)}\n`) })
const journal = journals.open({ trigger: 'message', from: 'ada', sessionId: 'crash-session', turn: 7 })
journal.toolStart({ id: 'lookup-1', tool: 'search', input: { q: 'deploy log' } })
journal.toolEnd({ id: 'lookup-1', tool: 'search', ok: true, result: 'found 3 lines' })
journal.toolStart({ id: 'shell-2', tool: 'shell', input: 'tail -f deploy.log' })
process.stdout.write(`${JSON.stringify({ ready: true, stream: journal.id })}\n`)
let n = 0
setInterval(() => {
  n++
  const chunk = `chunk ${String(n).padStart(5, '0')}; `
  journal.writeText(chunk)
  process.stdout.write(`${JSON.stringify({ n, at: Date.now(), chunk })}\n`)
}, interval)
