/**
 * Progress of a long command on stderr, and Ctrl-C that stops it cleanly (decision 0073).
 *
 * On a terminal: one line redrawn in place, a bar with counts, rate and time left. Otherwise: a
 * line when each phase starts, then at most one a second, and one when it ends — in the format of
 * the command's log lines (JSON when stdout is not a terminal, text otherwise). Nothing goes to
 * stdout, so `--json` output stays one envelope.
 *
 * The first Ctrl-C aborts the operation's signal: it stops at its next safe point (between items)
 * and the command says how to resume, with `ExitCode.interrupted`. A second Ctrl-C quits at once.
 */
import { Writable } from 'node:stream'
import { stripVTControlCharacters, styleText } from 'node:util'
import { createLineLogger } from '../../core/logger.ts'
import type { ProgressEvent, ProgressOptions } from '../../core/progress.ts'
import type { CommandContext, CommandResult } from './command.ts'
import { ExitCode } from './io.ts'

/** A line at most this often when stderr is not a terminal: a log, not a flood (10,000 items print ~10 lines a 10 s run). */
const LINE_EVERY_MS = 1000
/** The bar is redrawn at most this often: smooth to the eye, cheap when items come by the thousand. */
const REDRAW_EVERY_MS = 100
const BAR_WIDTH = 24

/** A long command: its name, and what it says about resuming when Ctrl-C stopped it. */
export interface LongWork {
  /** The command's words: "reindex", "migrate". */
  command: string
  /** What the stopped run left, and what to run next: "Run `engram reindex` to finish; …". */
  resume: string
}

interface Shown {
  phase: string
  done: number
  total?: number
  /** Items a second since the phase began. */
  rate: number
}

/** Where progress is drawn: `stderr` with whether it is a terminal. */
interface ReporterOptions {
  command: string
  stderr: { write(text: string): unknown; isTTY?: boolean }
  json: boolean
  now?: () => number
}

/** The reporter of one command's progress: `onProgress` for the operation, `end()` when it returned. */
interface Reporter {
  onProgress(event: ProgressEvent): void
  /** The last event seen, for the message of an interrupted run. */
  last(): Shown | undefined
  say(message: string): void
  end(outcome: 'done' | 'interrupted' | 'failed'): void
}

function count(value: number): string {
  return value.toLocaleString('en-US')
}

function rateText(rate: number): string {
  return rate >= 10 ? `${Math.round(rate)}/s` : `${rate.toFixed(1)}/s`
}

function seconds(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
}

/** "indexing 1,200/10,000 (12%), 850/s" — the words of a progress line. */
function describeProgress(shown: Shown): string {
  const of = shown.total === undefined ? count(shown.done) : `${count(shown.done)}/${count(shown.total)}${shown.total > 0 ? ` (${Math.floor((100 * shown.done) / shown.total)}%)` : ''}`
  return `${shown.phase} ${of}${shown.done > 0 ? `, ${rateText(shown.rate)}` : ''}`
}

function createReporter(options: ReporterOptions): Reporter {
  const now = options.now ?? (() => performance.now())
  const tty = options.stderr.isTTY === true
  const started = now()
  let phaseStarted = started
  let current: Shown | undefined
  let drawnAt = Number.NEGATIVE_INFINITY
  let drawnWidth = 0
  // JSON lines as the command's log lines are (its fields for a collector); for a person, the words alone.
  const json = createLineLogger({ level: 'info', write: (line) => options.stderr.write(line), format: 'json' })
  const log = (fields: Record<string, unknown>, message: string): void => {
    if (options.json) json.info({ command: options.command, ...fields }, message)
    else options.stderr.write(`engram ${message}\n`)
  }
  // Colour through styleText, which leaves it out when NO_COLOR is set or stderr is no terminal;
  // an stderr that is no stream (a test's, an embedding program's) gets none.
  const stream = options.stderr instanceof Writable ? options.stderr : undefined
  const styleWith = (styled: boolean) => (format: Parameters<typeof styleText>[0], text: string): string => (styled && stream ? styleText(format, text, { stream }) : text)

  /** The bar's line; cut to the terminal's width (unstyled then), as a line that wraps cannot be redrawn in place. */
  const bar = (shown: Shown): string => {
    const plain = barOf(shown, styleWith(false))
    const columns = (options.stderr as { columns?: number }).columns
    return columns !== undefined && plain.length >= columns ? plain.slice(0, Math.max(0, columns - 1)) : barOf(shown, styleWith(true))
  }
  const barOf = (shown: Shown, style: ReturnType<typeof styleWith>): string => {
    const parts = [style('bold', `engram ${options.command}`), shown.phase]
    if (shown.total !== undefined && shown.total > 0) {
      const filled = Math.min(BAR_WIDTH, Math.round((BAR_WIDTH * shown.done) / shown.total))
      parts.push(`[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}]`, `${count(shown.done)}/${count(shown.total)}`)
      if (shown.done > 0 && shown.rate > 0) parts.push(style('dim', `${rateText(shown.rate)}, ${seconds((1000 * (shown.total - shown.done)) / shown.rate)} left`))
    } else {
      parts.push(count(shown.done))
      if (shown.done > 0) parts.push(style('dim', rateText(shown.rate)))
    }
    return parts.join('  ')
  }
  const draw = (text: string): void => {
    // The line is overwritten in place: a carriage return, and spaces over what the last one left.
    const width = stripVTControlCharacters(text).length
    options.stderr.write(`\r${text}${' '.repeat(Math.max(0, drawnWidth - width))}`)
    drawnWidth = width
  }
  const clear = (): void => {
    if (drawnWidth > 0) options.stderr.write(`\r${' '.repeat(drawnWidth)}\r`)
    drawnWidth = 0
  }
  const line = (shown: Shown): void => {
    log({ phase: shown.phase, done: shown.done, ...(shown.total !== undefined ? { total: shown.total } : {}), rate: Math.round(shown.rate * 10) / 10 }, `${options.command}: ${describeProgress(shown)}`)
  }

  return {
    onProgress(event) {
      const at = now()
      const phaseChanged = current?.phase !== event.phase
      if (phaseChanged) phaseStarted = at
      const elapsed = (at - phaseStarted) / 1000
      current = { phase: event.phase, done: event.done, ...(event.total !== undefined ? { total: event.total } : {}), rate: elapsed > 0 ? event.done / elapsed : 0 }
      if (tty) {
        if (at - drawnAt >= REDRAW_EVERY_MS || phaseChanged) {
          drawnAt = at
          draw(bar(current))
        }
      } else if (phaseChanged || at - drawnAt >= LINE_EVERY_MS) {
        drawnAt = at
        line(current)
      }
    },
    last: () => current,
    say(message) {
      if (tty) clear()
      log({}, `${options.command}: ${message}`)
      if (tty && current) draw(bar(current))
    },
    end(outcome) {
      // On a terminal the bar goes and the result follows; a log gets a last line with the time taken.
      if (tty) {
        clear()
        return
      }
      if (outcome === 'failed' || drawnAt === Number.NEGATIVE_INFINITY) return
      log({ outcome, ms: Math.round(now() - started) }, `${options.command}: ${outcome} after ${seconds(now() - started)}`)
    },
  }
}

/** Whether `error` is, or was caused by, the abort of `signal`. */
function isAbortOf(error: unknown, signal: AbortSignal): boolean {
  for (let cause = error, depth = 0; cause !== undefined && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause === signal.reason) return true
  }
  return false
}

/**
 * Runs a long command's work with progress on stderr and Ctrl-C handled: `work` gets the options
 * to pass to its operation. Interrupted, it returns how far it came and `long.resume`, with
 * `ExitCode.interrupted`.
 */
export async function withProgress(context: CommandContext, long: LongWork, work: (progress: ProgressOptions) => Promise<CommandResult>): Promise<CommandResult> {
  const command = long.command
  const reporter = createReporter({ command, stderr: context.io.stderr as ReporterOptions['stderr'], json: context.json })
  const controller = new AbortController()
  const onInterrupt = (): void => {
    if (controller.signal.aborted) {
      // The second Ctrl-C: quit at once, as a process without this handler does.
      process.off('SIGINT', onInterrupt)
      process.kill(process.pid, 'SIGINT')
      return
    }
    reporter.say('stopping at the next safe point (Ctrl-C again quits at once)')
    controller.abort(new Error('interrupted (Ctrl-C)'))
  }
  process.on('SIGINT', onInterrupt)
  let outcome: 'done' | 'interrupted' | 'failed' = 'failed'
  try {
    const result = await work({ onProgress: reporter.onProgress, signal: controller.signal })
    outcome = 'done'
    return result
  } catch (error) {
    if (!controller.signal.aborted || !isAbortOf(error, controller.signal)) throw error
    outcome = 'interrupted'
    const last = reporter.last()
    const where = last ? ` while ${describeProgress(last)}` : ''
    return {
      data: { interrupted: true, ...(last ? { phase: last.phase, done: last.done, ...(last.total !== undefined ? { total: last.total } : {}) } : {}), resume: long.resume },
      human: `engram ${command} was interrupted (Ctrl-C)${where}.\n${long.resume}`,
      exitCode: ExitCode.interrupted,
    }
  } finally {
    process.off('SIGINT', onInterrupt)
    reporter.end(outcome)
  }
}
