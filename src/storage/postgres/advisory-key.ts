/**
 * PostgreSQL advisory locks are keyed by one 64-bit integer per database. engram's locks have
 * names, and several engram deployments may share a database in separate schemas, so the key is
 * the first 8 bytes of sha256(schema, name): distinct names collide with probability ~2^-64.
 */
import { createHash } from 'node:crypto'

export interface AdvisoryKey {
  /** The signed 64-bit key, as a decimal string (a `bigint` parameter). */
  key: string
  /** The halves as `pg_locks` shows them (classid, objid): unsigned 32-bit, as decimal strings. */
  classid: string
  objid: string
}

export function advisoryKey(schema: string, name: string): AdvisoryKey {
  const digest = createHash('sha256').update(schema).update('\0').update(name).digest()
  const key = digest.readBigInt64BE(0)
  return {
    key: key.toString(),
    classid: digest.readUInt32BE(0).toString(),
    objid: digest.readUInt32BE(4).toString(),
  }
}
