/**
 * Named exclusive locks on PostgreSQL: session-level advisory locks (`pg_advisory_lock`), shared by
 * every process and host that uses the same database and schema (the key is sha256(schema, name),
 * `advisory-key.ts`). The file locks' contract (decision 0027), on the server:
 *
 * - A holder keeps one connection of `handle.sessions` for as long as it holds the lock. The server
 *   releases a session's advisory locks the moment the session ends, so a holder that dies (SIGKILL
 *   included: its socket closes) never blocks anyone and there is no stale time to wait out.
 * - A waiter waits *in the server* (`pg_advisory_lock`), which wakes it the instant the lock is
 *   released and serves waiters in arrival order (a `pg_try_advisory_lock` fails while anyone is
 *   queued), so between processes the lock is passed on fairly without polling.
 * - Callers in one process queue in arrival order in a line per lock, so only the head of each line
 *   takes a connection and asks the server.
 * - `timeoutMs` is how long a waiter bears *no progress* — the same holder keeping the lock — not
 *   its total wait: while it waits, it looks every 100 ms at who holds the lock (`pg_locks`, and the
 *   holder's `application_name`, which names it); a new holder resets the clock, and only a holder
 *   that stays `timeoutMs` gets the wait cancelled.
 */
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { LockOutcome, Locks } from '../contracts.ts'
import { joinLine, type Line, lineOf, turnInLine } from '../lock-lines.ts'
import { type AdvisoryKey, advisoryKey } from './advisory-key.ts'
import type { PostgresHandle } from './connection.ts'
import { type PgClient, type PgQueryable, pgErrorCode } from './driver.ts'

/** As for file locks (decision 0027): a live holder is worth waiting for; only one stuck for a minute is reported. */
const DEFAULT_TIMEOUT_MS = 60_000
/** How often a waiter looks at who holds the lock (a new holder is progress). */
const LOOK_MS = 100
/** The wait was cancelled (by this waiter, when its timeout passed). */
const QUERY_CANCELED = '57014'
/** `application_name` is at most 63 bytes (NAMEDATALEN - 1). */
const NAME_BYTES = 63

/** The callers of one lock in this process, in arrival order; `waiting[0]` holds or is acquiring it. */
function busyError(name: string, timeoutMs: number, holder: string | undefined): EngramError {
  return new EngramError({
    code: ErrorCode.lockBusy,
    category: 'system',
    message: `Lock "${name}" has been held${holder ? ` by ${holder}` : ''} for ${timeoutMs} ms without being released.`,
    fix: 'Another engram process is busy with the same memory for unusually long (a hung process?); retry shortly. A lock of a process that died is released by the server at once.',
    details: { name, timeoutMs, holder },
  })
}

function truncateBytes(text: string, bytes: number): string {
  let out = text
  while (Buffer.byteLength(out) > bytes) out = out.slice(0, -1)
  return out
}

/** Who holds the lock now, as the server sees it; undefined when nobody does. */
async function holderOf(db: PgQueryable, key: AdvisoryKey): Promise<string | undefined> {
  const { rows } = await db.query<{ pid: number; name: string | null }>(
    `SELECT l.pid, a.application_name AS name
       FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = $1::oid AND l.objid = $2::oid`,
    [key.classid, key.objid],
  )
  const row = rows[0]
  if (!row) return undefined
  return row.name ? `${row.name} (server pid ${row.pid})` : `server pid ${row.pid}`
}

/**
 * Locks over `handle`: advisory locks of its database, keyed within its schema. `onLost` hears of a
 * holder's connection that broke while it held a lock (the server released the lock then).
 */
export function createPostgresLocks(handle: PostgresHandle, options: { onLost?: (name: string, error: Error) => void } = {}): Locks {
  const lines = new Map<string, Line>()
  const backendPids = new WeakMap<PgClient, number>()
  let acquisitions = 0

  /** The server process of a session connection (cached: a connection keeps its backend). */
  async function backendPid(client: PgClient): Promise<number> {
    let pid = backendPids.get(client)
    if (pid === undefined) {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      pid = (rows[0] as { pid: number }).pid
      backendPids.set(client, pid)
    }
    return pid
  }

  /**
   * Takes the advisory lock on `client`; false when it is held elsewhere (at once without `wait`,
   * or after `timeoutMs` without progress). The wait stays queued in the server from start to end
   * (a wait that were cut into slices would lose its place each time and could starve behind
   * back-to-back holders); between looks at the holder it is only watched, and it is cancelled
   * (`pg_cancel_backend`) only when the same holder has kept the lock for `timeoutMs`.
   */
  async function acquire(client: PgClient, key: AdvisoryKey, line: Line, wait: boolean, timeoutMs: number): Promise<boolean> {
    const tried = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key.key])
    if (tried.rows[0]?.ok) return true
    if (!wait) return false
    const pid = await backendPid(client)
    let seen = await holderOf(handle.pool, key)
    let cancelled = false
    const granted = client.query('SELECT pg_advisory_lock($1::bigint)', [key.key]).then(
      () => true,
      (error: unknown) => {
        if (cancelled && pgErrorCode(error) === QUERY_CANCELED) return false
        throw error
      },
    )
    for (;;) {
      const quiet = performance.now() - line.progressAt
      if (quiet >= timeoutMs) {
        cancelled = true
        await handle.pool.query('SELECT pg_cancel_backend($1)', [pid])
        // Granted just before the cancel arrived (a cancel reaching an idle session is dropped): then it is ours.
        return granted
      }
      const controller = new AbortController()
      const looked = await Promise.race([
        granted,
        sleep(Math.min(timeoutMs - quiet, LOOK_MS), 'look' as const, { signal: controller.signal }).catch(() => 'look' as const),
      ])
      controller.abort()
      if (looked !== 'look') return looked
      const holder = await holderOf(handle.pool, key)
      if (holder !== seen) {
        // Another process's holder finished and a new one took over: the line moves.
        seen = holder
        line.progressAt = performance.now()
      }
    }
  }

  return {
    async withLock<T>(name: string, fn: () => Promise<T>, lockOptions: { wait?: boolean; timeoutMs?: number } = {}): Promise<LockOutcome<T>> {
      const wait = lockOptions.wait ?? true
      const timeoutMs = lockOptions.timeoutMs ?? DEFAULT_TIMEOUT_MS
      const key = advisoryKey(handle.schema, name)

      const current = lineOf(lines, key.key)
      if (current.waiting.length > 0 && !wait) return current.holder === undefined ? { kind: 'busy' } : { kind: 'busy', holder: current.holder }
      const { turn, leave } = joinLine(lines, key.key, current)

      let client: PgClient | undefined
      let acquired = false
      let busyHolder: string | undefined
      try {
        // Only a waiting caller can miss its turn in the line: without `wait`, a busy line answered above.
        if (await turnInLine(current, turn, timeoutMs)) {
          client = await handle.sessions.connect()
          acquired = await acquire(client, key, current, wait, timeoutMs)
          if (!acquired) busyHolder = await holderOf(handle.pool, key)
        } else {
          busyHolder = current.holder
        }
      } catch (error) {
        // A connection that failed is closed, not handed to the next caller.
        client?.release(error as Error)
        leave()
        throw error
      }
      if (!client || !acquired) {
        // A wait cancelled at the timeout may have been granted just before (then the session holds
        // the lock): the connection is closed, which releases whatever it holds.
        client?.release(wait ? true : undefined)
        leave()
        if (wait) throw busyError(name, timeoutMs, busyHolder)
        return busyHolder === undefined ? { kind: 'busy' } : { kind: 'busy', holder: busyHolder }
      }

      acquisitions++
      const holder = `engram pid ${process.pid} #${acquisitions} on ${hostname()}`
      current.holder = holder
      const held = client
      let lost: Error | undefined
      const onError = (error: Error) => {
        lost = error
        options.onLost?.(name, error)
      }
      held.on('error', onError)
      let releaseError: Error | undefined
      try {
        // Names the holder to waiters elsewhere (pg_stat_activity), and lets them see the lock change hands.
        await held.query(`SELECT set_config('application_name', $1, false)`, [truncateBytes(holder, NAME_BYTES)]).catch(() => {})
        return { kind: 'done', value: await fn() }
      } finally {
        delete current.holder
        try {
          if (!lost) await held.query(`SELECT pg_advisory_unlock($1::bigint), set_config('application_name', 'engram', false)`, [key.key])
        } catch (error) {
          // The connection broke: the server has released the lock with the session.
          releaseError = error as Error
        } finally {
          held.off('error', onError)
          held.release(lost ?? releaseError)
          current.progressAt = performance.now()
          leave()
        }
      }
    },
  }
}
