/**
 * Clients that hold `engram serve`'s connections without finishing a request (decision
 * 0056), for test/serve-slow-clients.test.ts and the robustness bench: raw sockets from a chosen
 * loopback address (127.0.0.0/8 is all loopback on Linux, so each address is another client).
 */
import { request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface Trickle {
  socket: Socket
  /** When the server closed it (ms after opening) and what it answered before closing. */
  closed: Promise<{ afterMs: number; answer: string }>
}

export type TrickleKind = 'silent' | 'headers' | 'body' | { whole: string }

/**
 * A client that never finishes its request: `silent` sends nothing, `headers` one header line every
 * 200 ms, `body` whole headers of a search (with `token`) and then one byte of its body every
 * 200 ms; or one that sends a `whole` request at once.
 */
export function trickle(port: number, kind: TrickleKind, options: { localAddress?: string; token?: string } = {}): Trickle {
  const socket = connect({ port, host: '127.0.0.1', localAddress: options.localAddress ?? '127.0.0.1' })
  const opened = performance.now()
  let answer = ''
  let timer: NodeJS.Timeout | undefined
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString()
  })
  socket.on('error', () => {})
  socket.on('connect', () => {
    if (typeof kind === 'object') socket.write(kind.whole)
    else if (kind === 'headers') {
      socket.write(`POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`)
      let n = 0
      timer = setInterval(() => socket.writable && socket.write(`x-slow-${n++}: a\r\n`), 200)
    } else if (kind === 'body') {
      const authorization = options.token === undefined ? '' : `authorization: Bearer ${options.token}\r\n`
      socket.write(`POST /v1/search HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${authorization}content-type: application/json\r\ncontent-length: 10000\r\n\r\n{"query":"`)
      timer = setInterval(() => socket.writable && socket.write('a'), 200)
    }
  })
  const closed = new Promise<{ afterMs: number; answer: string }>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer)
      resolve({ afterMs: performance.now() - opened, answer })
    }),
  )
  return { socket, closed }
}

/** When and how the server closed the connection, or undefined if it still holds it after `ms`. */
export const closedWithin = (t: Trickle, ms: number) => Promise.race([t.closed, sleep(ms).then(() => undefined)])

/** Resolves once the server has accepted the connection (the client's connect is done). */
export const connected = (t: Trickle) => (t.socket.connecting ? new Promise((resolve) => t.socket.once('connect', resolve)) : Promise.resolve())

/** The status of a raw HTTP answer (0 for none). */
export const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)

export interface Answer {
  status: number
  connection: string | undefined
  body: string
  ms: number
}

/**
 * One request on its own connection from `localAddress`, asking to keep it alive (so the answer's
 * `connection` header says whether the server would), closed by the client once answered; a POST
 * of `body` as JSON when there is one.
 */
export function send(port: number, path: string, options: { localAddress: string; token?: string; body?: unknown }): Promise<Answer> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const headers = {
      connection: 'keep-alive',
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    }
    const req = httpRequest({ host: '127.0.0.1', port, path, localAddress: options.localAddress, agent: false, method: options.body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString()
      })
      res.on('end', () => {
        req.destroy()
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body, ms: performance.now() - started })
      })
    })
    req.on('error', reject)
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })
}
