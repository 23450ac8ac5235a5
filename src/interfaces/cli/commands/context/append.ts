/**
 * `engram context append --session S (--role R --text T | --file F.jsonl)`. A JSONL file's valid
 * lines are appended in order; broken lines are reported with their line numbers (exit 3) and
 * nothing valid is lost.
 */
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { describeError, EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { MessageInput } from '../../../../core/message.ts'
import { validateMessages } from '../../../../memory/context/session-support.ts'
import type { Command } from '../../command.ts'
import { ExitCode } from '../../io.ts'
import { requireSession, SESSION_OPTION, usage, withContext } from './shared.ts'

export interface BadLine {
  line: number
  text: string
  reason: string
}

/**
 * Parse JSONL messages: every valid line, and every broken one with its 1-based line number (a
 * message longer than `maxChars`, limits.messageChars, is a broken line).
 */
export function parseMessageLines(text: string, maxChars?: number): { messages: MessageInput[]; bad: BadLine[] } {
  const messages: MessageInput[] = []
  const bad: BadLine[] = []
  text.split(/\r?\n/).forEach((raw, index) => {
    if (raw.trim() === '') return
    const line = index + 1
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (error) {
      bad.push({ line, text: raw.slice(0, 200), reason: `not JSON: ${(error as Error).message}` })
      return
    }
    try {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw usage('a line must be a JSON object', 'write {"role": "user", "content": "..."}')
      const { role, content, at, name, meta } = value as Record<string, unknown>
      const message = { role, content } as MessageInput
      if (at !== undefined) message.at = at as string
      if (name !== undefined) {
        if (typeof name !== 'string') throw usage('name must be a string', 'write "name": "ada"')
        message.name = name
      }
      if (meta !== undefined) {
        if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw usage('meta must be an object', 'write "meta": {…}')
        message.meta = meta as Record<string, unknown>
      }
      validateMessages([message], maxChars)
      messages.push(message)
    } catch (error) {
      bad.push({ line, text: raw.slice(0, 200), reason: EngramError.is(error) ? error.message.split('\n')[0]!.replace('messages[0].', '') : describeError(error) })
    }
  })
  return { messages, bad }
}

export const contextAppendCommand: Command = {
  path: ['context', 'append'],
  usage: '--session S (--role R --text T | --file F.jsonl) [--user U] [--name N]',
  examples: ['engram context append --session chat-42 --role user --text "Hello"', 'engram context append --session chat-42 --file messages.jsonl --user ada'],
  home: 'creates',
  options: {
    ...SESSION_OPTION,
    role: { type: 'string', description: 'system | user | assistant | tool', valueName: 'R' },
    text: { type: 'string', description: 'the message text', valueName: 'T' },
    name: { type: 'string', description: 'speaker name', valueName: 'N' },
    file: { type: 'string', description: 'JSONL, one {"role","content","at"?,"name"?} per line', valueName: 'F' },
  },
  async run(context) {
    const file = context.options.file
    const text = context.options.text
    if ((typeof file === 'string') === (typeof text === 'string')) {
      throw usage('Pass either --text (with --role) or --file, not both and not neither.', 'e.g. engram context append --session S --role user --text "hello", or --file messages.jsonl')
    }
    let content: string | undefined
    if (typeof file === 'string') {
      const path = resolve(context.io.cwd, file)
      try {
        content = await readFile(path, 'utf8')
      } catch (error) {
        throw new EngramError({ code: ErrorCode.notFound, category: 'user', message: `Cannot read ${path}: ${(error as Error).message}`, fix: 'Check the --file path.' })
      }
    }
    return withContext(context, async (provider, mind) => {
      const maxChars = mind.config.values.limits.messageChars
      let messages: MessageInput[]
      let bad: BadLine[] = []
      if (content !== undefined) ({ messages, bad } = parseMessageLines(content, maxChars))
      else {
        const role = context.options.role ?? 'user'
        const message = { role, content: text } as MessageInput
        if (typeof context.options.name === 'string') message.name = context.options.name
        validateMessages([message], maxChars)
        messages = [message]
      }
      const session = await requireSession(context, mind, 'append')
      const stored = await provider.append(session, messages)
      const data = {
        sessionId: session.sessionId,
        appended: stored.length,
        seqs: stored.length > 0 ? { from: stored[0]!.seq, to: stored[stored.length - 1]!.seq } : null,
        ids: stored.map((message) => message.id),
        badLines: bad,
      }
      const lines = [`appended ${stored.length} message${stored.length === 1 ? '' : 's'} to ${session.sessionId}${data.seqs ? ` (#${data.seqs.from}–#${data.seqs.to})` : ''}`]
      for (const line of bad) lines.push(`  skipped line ${line.line}: ${line.reason}`)
      return { data, human: lines.join('\n'), ...(bad.length > 0 ? { exitCode: ExitCode.user } : {}) }
    })
  },
}
