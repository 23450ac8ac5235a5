/**
 * Documents on PostgreSQL (migration 4): knowledge, procedures, episodes, user profiles, state and
 * prompt layers as rows — the live set (`docs_live`), archived copies (`docs_archived`) and saved
 * versions (`docs_versions`) — with the file backend's semantics and paths.
 *
 * Each document keeps the path it has in the embedded home (`agents/<a>/knowledge/<slug>.md`,
 * `…/archive/forgotten/knowledge/<slug>.md`, `…/archive/versions/<kind>/<slug>.<stamp>.md`), so
 * refs, provenance and an export read the same on both backends; its hash is the sha256 of the file
 * an export writes. Rows are keyed by the owner whose tree the file is in (decision 0017): prompt
 * layers are the agent's and user profiles are shared (`shared/users/`, their history under
 * `shared/users/.history/<slug>/`), whatever owner a store is opened for.
 *
 * Every change is one transaction that first takes an advisory lock of the document, the rows'
 * counterpart of the file backend's lock per document: two processes rewriting one document at
 * once each save the other's version, none is lost. Nothing is deleted except by `purge`.
 */
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { parseFrontmatter, serializeFrontmatter } from '../../core/frontmatter.ts'
import { contentHash } from '../../core/hash.ts'
import { DOC_KINDS, type DocKind, type Frontmatter, type MemoryDoc } from '../../core/memory-doc.ts'
import { type KindHome, kindFolderRel, kindSpec, type MemoryKindSpec } from '../../core/memory-kinds.ts'
import { type Owner, userKey, userOfOwner } from '../../core/owner.ts'
import type { ArchiveReason, DocRef, DocumentStore, ParseProblem } from '../contracts.ts'
import { ARCHIVE_REASONS, type ArchivedPathParts, archivedPathParts, assertSafeSlug, nothingArchived, stampOf, VERSION_STAMP } from '../document-paths.ts'
import { advisoryKey } from './advisory-key.ts'
import type { PostgresHandle } from './connection.ts'
import type { PgQueryable } from './driver.ts'
import { invalid } from '../input-checks.ts'
import { type OwnerRows, ownerRows } from './owner-rows.ts'
import { jsonObject } from './rows.ts'

export interface PostgresDocumentStoreOptions {
  agent: string
  clock: Clock
  /** Whose documents (default the agent's). */
  owner?: Owner
}

type Reason = Exclude<ArchiveReason, 'versions'>

const PROMPT_SLUGS = ['SYSTEM', 'SOUL'] as const
const EPISODE_SLUG = /^\d{4}-\d{2}-\d{2}$/

interface DocRow {
  slug: string
  frontmatter: unknown
  body: string
  hash: string
}

interface VersionRow {
  name: string
  archived_at: string
  retired_at: string | null
}

function checkSlug(kind: DocKind, slug: string): void {
  if (!(DOC_KINDS as readonly string[]).includes(kind)) throw invalid(`Unknown document kind "${kind}".`, `Use one of: ${DOC_KINDS.join(', ')}.`)
  assertSafeSlug(slug)
  if (kind === 'episode' && !EPISODE_SLUG.test(slug)) throw invalid(`Episode slug "${slug}" is not a date.`, 'Episodes are one file per day: use the date, YYYY-MM-DD.')
  if (kind === 'prompt' && !(PROMPT_SLUGS as readonly string[]).includes(slug)) {
    throw invalid(`Prompt slug "${slug}" is not a prompt layer.`, `Use one of: ${PROMPT_SLUGS.join(', ')}.`)
  }
}

function assertReason(reason: string): asserts reason is Reason {
  if (!(ARCHIVE_REASONS as readonly string[]).includes(reason)) throw invalid(`Unknown archive reason "${reason}".`, `Use one of: ${ARCHIVE_REASONS.join(', ')}.`)
}

/** The file text of a document and what reading it back gives, as the file backend stores it. */
function contentOf(frontmatter: Frontmatter, body: string): { frontmatter: Frontmatter; body: string; hash: string } {
  const text = serializeFrontmatter(frontmatter, body)
  // PostgreSQL text cannot hold NUL; refused here with the reason rather than as an encoding error.
  if (text.includes('\u0000')) throw invalid('The document contains a NUL character, which PostgreSQL text cannot store.', 'Remove the NUL characters (\\u0000) from the frontmatter and body.')
  const parsed = parseFrontmatter(text)
  return { frontmatter: parsed.frontmatter, body: parsed.body, hash: contentHash(text) }
}

/** The documents of `options.owner` (the agent's by default) for `options.agent` over `handle`. */
export function createPostgresDocumentStore(handle: PostgresHandle, options: PostgresDocumentStoreOptions): DocumentStore {
  const { pool, schema } = handle
  const { clock } = options
  const owner = options.owner ?? 'agent'
  assertSafeSlug(options.agent, 'agent')
  const own = ownerRows(options.agent, owner)
  const agentRel = `agents/${options.agent}`
  const user = userOfOwner(owner)
  const treeRel = owner === 'shared' ? 'shared' : user === undefined ? agentRel : `${agentRel}/users/${userKey(user)}`

  /** Where a kind lives (memory-kinds.ts): checkSlug has refused a kind the registry lacks before any path is made. */
  const homeOf = (kind: DocKind): KindHome => (kindSpec(kind) as MemoryKindSpec).home
  /** Whose rows a kind's documents are: profiles are shared, prompt layers the agent's. */
  function rowsOf(kind: DocKind): OwnerRows {
    if (homeOf(kind) === 'shared-users') return ownerRows(options.agent, 'shared')
    if (homeOf(kind) === 'agent') return ownerRows(options.agent, 'agent')
    return own
  }
  const folderOf = (kind: DocKind): string => kindFolderRel(kindSpec(kind) as MemoryKindSpec, treeRel, agentRel)
  const relOf = (kind: DocKind, slug: string): string => `${folderOf(kind)}/${slug}.md`
  const historyRel = (kind: DocKind, slug: string): string => (homeOf(kind) === 'shared-users' ? `shared/users/.history/${slug}` : homeOf(kind) === 'agent' ? agentRel : treeRel)
  const archiveRel = (reason: string, kind: DocKind, slug: string): string => `${historyRel(kind, slug)}/archive/${reason}/${kind}/${slug}.md`
  const versionRel = (kind: DocKind, slug: string, version: VersionRow): string =>
    `${historyRel(kind, slug)}/archive/${version.retired_at === null ? 'versions' : 'forgotten/versions'}/${kind}/${version.name}`

  /** The key columns of one document: agent, owner, kind, slug ($1…$4). */
  const keyOf = (kind: DocKind, slug: string): string[] => {
    const rows = rowsOf(kind)
    return [rows.agent, rows.owner, kind, slug]
  }
  const KEY = 'agent = $1 AND owner = $2 AND kind = $3 AND slug = $4'

  function toDoc(kind: DocKind, row: DocRow): MemoryDoc {
    return { kind, slug: row.slug, frontmatter: jsonObject(row.frontmatter), body: row.body, path: relOf(kind, row.slug), hash: row.hash }
  }

  /** Runs `fn` in a transaction holding the document's advisory lock. */
  function locked<T>(kind: DocKind, slug: string, fn: (db: PgQueryable, key: string[]) => Promise<T>): Promise<T> {
    const key = keyOf(kind, slug)
    return handle.transaction(async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryKey(schema, `docs:${key.join('\u0001')}`).key])
      return fn(db, key)
    })
  }

  /** Saves a copy of a document as a version named as the file backend names it; the first free `-n` when one instant saves twice. */
  async function saveVersion(db: PgQueryable, key: string[], content: DocRow, reason: string | undefined, instant?: string): Promise<void> {
    // One transaction saves the version and replaces the row: a crash leaves neither, so a write repeated at the same instant saves it once.
    const at = instant === undefined ? clock.now() : new Date(instant)
    const stamp = stampOf(at)
    const slug = key[3] ?? ''
    const { rows } = await db.query<{ n: number }>(`SELECT coalesce(max(n), 0) AS n FROM docs_versions WHERE ${KEY} AND archived_at = $5`, [...key, at.toISOString()])
    const n = (rows[0]?.n ?? 0) + 1
    await db.query(
      `INSERT INTO docs_versions (agent, owner, kind, slug, name, archived_at, n, frontmatter, body, hash, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json, $9, $10, $11)`,
      [...key, `${slug}.${stamp}${n === 1 ? '' : `-${n}`}.md`, at.toISOString(), n, JSON.stringify(content.frontmatter), content.body, content.hash, reason ?? null],
    )
  }

  async function versionedAt(db: PgQueryable, key: string[], instant: string): Promise<boolean> {
    const { rows } = await db.query(`SELECT 1 FROM docs_versions WHERE ${KEY} AND archived_at = $5 LIMIT 1`, [...key, new Date(instant).toISOString()])
    return rows.length > 0
  }

  async function live(db: PgQueryable, key: string[]): Promise<DocRow | undefined> {
    const { rows } = await db.query<DocRow>(`SELECT slug, frontmatter, body, hash FROM docs_live WHERE ${KEY}`, key)
    return rows[0]
  }

  async function putLive(db: PgQueryable, key: string[], content: { frontmatter: Frontmatter; body: string; hash: string }): Promise<void> {
    await db.query(
      `INSERT INTO docs_live (agent, owner, kind, slug, frontmatter, body, hash, modified_at) VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8)
       ON CONFLICT (agent, owner, kind, slug) DO UPDATE SET frontmatter = excluded.frontmatter, body = excluded.body, hash = excluded.hash, modified_at = excluded.modified_at`,
      [...key, JSON.stringify(content.frontmatter), content.body, content.hash, clock.now().toISOString()],
    )
  }

  const VERSION_ORDER = 'archived_at DESC, n DESC'

  /** The row of an archived copy or saved version (by name, retired or not), if any. */
  async function readArchivedRow(db: PgQueryable, key: string[], parts: ArchivedPathParts): Promise<DocRow | undefined> {
    const { rows } =
      parts.type === 'copy'
        ? await db.query<DocRow>(`SELECT slug, frontmatter, body, hash FROM docs_archived WHERE ${KEY} AND reason = $5`, [...key, parts.reason])
        : await db.query<DocRow>(`SELECT slug, frontmatter, body, hash FROM docs_versions WHERE ${KEY} AND name = $5`, [...key, parts.name])
    return rows[0]
  }

  return {
    async list(kind) {
      if (!(DOC_KINDS as readonly string[]).includes(kind)) return []
      const [agent, ownerColumn] = keyOf(kind, '')
      const { rows } = await pool.query<{ slug: string; hash: string; modified_at: string }>(
        'SELECT slug, hash, modified_at FROM docs_live WHERE agent = $1 AND owner = $2 AND kind = $3 ORDER BY slug COLLATE "C"',
        [agent, ownerColumn, kind],
      )
      return rows.map((row): DocRef => ({ kind, slug: row.slug, path: relOf(kind, row.slug), hash: row.hash, modifiedAt: row.modified_at }))
    },

    async slugs(kind) {
      if (!(DOC_KINDS as readonly string[]).includes(kind)) return []
      const [agent, ownerColumn] = keyOf(kind, '')
      const { rows } = await pool.query<{ slug: string }>('SELECT slug FROM docs_live WHERE agent = $1 AND owner = $2 AND kind = $3 ORDER BY slug COLLATE "C"', [agent, ownerColumn, kind])
      return rows.map((row) => row.slug)
    },

    async read(kind, slug) {
      checkSlug(kind, slug)
      const row = await live(pool, keyOf(kind, slug))
      return row ? toDoc(kind, row) : null
    },

    async write(kind, slug, frontmatter, body, writeOptions) {
      checkSlug(kind, slug)
      const content = contentOf(frontmatter, body)
      return locked(kind, slug, async (db, key) => {
        const old = await live(db, key)
        // A write replayed at its instant (a consolidation unit run again after a kill that came
        // after this transaction committed) whose content is already live, with a version of that
        // instant saved, is done: saving the live row again would add a version the unkilled run never made.
        if (old && writeOptions?.at !== undefined && old.hash === content.hash && (await versionedAt(db, key, writeOptions.at))) return toDoc(kind, { slug, ...content })
        if (old) await saveVersion(db, key, old, writeOptions?.reason, writeOptions?.at)
        await putLive(db, key, content)
        return toDoc(kind, { slug, ...content })
      })
    },

    async append(kind, slug, text, frontmatter?: Frontmatter) {
      checkSlug(kind, slug)
      return locked(kind, slug, async (db, key) => {
        const old = await live(db, key)
        let content: { frontmatter: Frontmatter; body: string; hash: string }
        if (!old) content = contentOf(frontmatter ?? {}, text)
        else {
          // Appended to the file text as it is, as the file backend appends to the bytes.
          const before = serializeFrontmatter(jsonObject(old.frontmatter), old.body)
          const separator = before.length === 0 || before.endsWith('\n') ? '' : '\n'
          const parsed = parseFrontmatter(before + separator + text)
          content = contentOf(parsed.frontmatter, parsed.body)
        }
        await putLive(db, key, content)
        return toDoc(kind, { slug, ...content })
      })
    },

    async archive(kind, slug, reason) {
      checkSlug(kind, slug)
      assertReason(reason)
      return locked(kind, slug, async (db, key) => {
        const old = await live(db, key)
        if (!old) {
          throw new EngramError({
            code: ErrorCode.notFound,
            category: 'user',
            message: `Cannot archive ${relOf(kind, slug)}: there is no such document.`,
            fix: 'List the documents of that kind to find the right slug.',
            details: { kind, slug },
          })
        }
        // A document archived earlier under the same slug and reason becomes a version, never overwritten.
        const earlier = await db.query<DocRow>(`DELETE FROM docs_archived WHERE ${KEY} AND reason = $5 RETURNING slug, frontmatter, body, hash`, [...key, reason])
        if (earlier.rows[0]) await saveVersion(db, key, earlier.rows[0], `replaced in archive/${reason} by a newer archived copy`)
        await db.query(
          `INSERT INTO docs_archived (agent, owner, kind, slug, reason, frontmatter, body, hash, archived_at)
           SELECT agent, owner, kind, slug, $5, frontmatter, body, hash, $6 FROM docs_live WHERE ${KEY}`,
          [...key, reason, clock.now().toISOString()],
        )
        await db.query(`DELETE FROM docs_live WHERE ${KEY}`, key)
        return archiveRel(reason, kind, slug)
      })
    },

    async restore(kind, slug, reason) {
      checkSlug(kind, slug)
      assertReason(reason)
      const source = archiveRel(reason, kind, slug)
      return locked(kind, slug, async (db, key) => {
        const { rows } = await db.query<DocRow>(`SELECT slug, frontmatter, body, hash FROM docs_archived WHERE ${KEY} AND reason = $5`, [...key, reason])
        const archived = rows[0]
        if (!archived) {
          throw nothingArchived(kind, slug, reason, source)
        }
        const rel = relOf(kind, slug)
        if (await live(db, key)) {
          throw new EngramError({
            code: ErrorCode.invalidArgument,
            category: 'user',
            message: `Cannot restore ${kind} "${slug}": a live document already exists at ${rel}.`,
            fix: `Archive or rename the live document ${rel} first, then restore; or merge the archived copy ${source} into it by hand.`,
            details: { kind, slug, reason, live: rel, archived: source },
          })
        }
        await db.query(`DELETE FROM docs_archived WHERE ${KEY} AND reason = $5`, [...key, reason])
        await putLive(db, key, { frontmatter: jsonObject(archived.frontmatter), body: archived.body, hash: archived.hash })
        return toDoc(kind, archived)
      })
    },

    async versions(kind, slug) {
      checkSlug(kind, slug)
      const { rows } = await pool.query<VersionRow>(
        `SELECT name, archived_at, retired_at FROM docs_versions WHERE ${KEY} AND retired_at IS NULL ORDER BY ${VERSION_ORDER}`,
        keyOf(kind, slug),
      )
      return rows.map((row) => ({ path: versionRel(kind, slug, row), archivedAt: row.archived_at }))
    },

    async purge(kind, slug) {
      checkSlug(kind, slug)
      return locked(kind, slug, async (db, key) => {
        const removed: string[] = []
        if ((await db.query(`DELETE FROM docs_live WHERE ${KEY}`, key)).rowCount) removed.push(relOf(kind, slug))
        const archived = await db.query<{ reason: string }>(`DELETE FROM docs_archived WHERE ${KEY} RETURNING reason`, key)
        for (const reason of ARCHIVE_REASONS) if (archived.rows.some((row) => row.reason === reason)) removed.push(archiveRel(reason, kind, slug))
        const versions = await db.query<VersionRow & { n: number }>(`DELETE FROM docs_versions WHERE ${KEY} RETURNING name, archived_at, retired_at, n`, key)
        const order = (a: VersionRow & { n: number }, b: VersionRow & { n: number }): number => b.archived_at.localeCompare(a.archived_at) || b.n - a.n
        const saved = versions.rows.filter((row) => row.retired_at === null).sort(order)
        const retired = versions.rows.filter((row) => row.retired_at !== null).sort(order)
        for (const row of [...saved, ...retired]) removed.push(versionRel(kind, slug, row))
        return removed
      })
    },

    async retainVersions(kind, slug, keep) {
      checkSlug(kind, slug)
      if (!Number.isInteger(keep) || keep < 0) {
        throw invalid(`Cannot keep ${JSON.stringify(keep)} versions: keep must be a whole number of versions, 0 or more.`, 'Pass e.g. 5 (the seed keeps the 5 most recent versions of a procedure).')
      }
      return locked(kind, slug, async (db, key) => {
        const { rows } = await db.query<VersionRow>(
          `UPDATE docs_versions SET retired_at = $5, retention = $6
           WHERE ${KEY} AND name IN (SELECT name FROM docs_versions WHERE ${KEY} AND retired_at IS NULL ORDER BY ${VERSION_ORDER} OFFSET $7)
           RETURNING name, archived_at, retired_at, n`,
          [...key, clock.now().toISOString(), `older than the ${keep} newest versions`, keep],
        )
        const order = (a: VersionRow & { n?: number }, b: VersionRow & { n?: number }): number => b.archived_at.localeCompare(a.archived_at) || (b.n ?? 0) - (a.n ?? 0)
        return rows.sort(order).map((row) => versionRel(kind, slug, row))
      })
    },

    async readArchived(path) {
      const parts = archivedPathParts(path)
      if (!parts || (parts.type === 'copy' && !(ARCHIVE_REASONS as readonly string[]).includes(parts.reason))) return null
      const { kind, slug } = parts
      if (parts.type === 'copy') {
        if (archiveRel(parts.reason, kind, slug) !== path) return null
        const { rows } = await pool.query<DocRow>(`SELECT slug, frontmatter, body, hash FROM docs_archived WHERE ${KEY} AND reason = $5`, [...keyOf(kind, slug), parts.reason])
        return rows[0] ? serializeFrontmatter(jsonObject(rows[0].frontmatter), rows[0].body) : null
      }
      const { rows } = await pool.query<VersionRow & DocRow>(`SELECT name, archived_at, retired_at, slug, frontmatter, body, hash FROM docs_versions WHERE ${KEY} AND name = $5`, [
        ...keyOf(kind, slug),
        parts.name,
      ])
      const row = rows[0]
      // The path says whether the version was retired; one named in the other folder is not there.
      return row && versionRel(kind, slug, row) === path ? serializeFrontmatter(jsonObject(row.frontmatter), row.body) : null
    },

    async archivedPaths() {
      // This owner's documents only: profiles are the shared store's, prompt layers the agent's.
      const mine = DOC_KINDS.filter((kind) => {
        const rows = rowsOf(kind)
        return rows.agent === own.agent && rows.owner === own.owner
      })
      const copies = await pool.query<{ kind: DocKind; slug: string; reason: string }>(`SELECT kind, slug, reason FROM docs_archived WHERE agent = $1 AND owner = $2 AND kind = ANY($3)`, [
        own.agent,
        own.owner,
        mine,
      ])
      const versions = await pool.query<VersionRow & { kind: DocKind; slug: string }>(
        `SELECT kind, slug, name, archived_at, retired_at FROM docs_versions WHERE agent = $1 AND owner = $2 AND kind = ANY($3)`,
        [own.agent, own.owner, mine],
      )
      const paths = [...copies.rows.map((row) => archiveRel(row.reason, row.kind, row.slug)), ...versions.rows.map((row) => versionRel(row.kind, row.slug, row))]
      return paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    },

    async putArchived(path, text) {
      const parts = archivedPathParts(path)
      const ours =
        parts !== undefined &&
        (parts.type === 'copy'
          ? (ARCHIVE_REASONS as readonly string[]).includes(parts.reason) && archiveRel(parts.reason, parts.kind, parts.slug) === path
          : versionRel(parts.kind, parts.slug, { name: parts.name, archived_at: '', retired_at: parts.retired ? '' : null }) === path)
      const stamp = parts?.type === 'version' ? VERSION_STAMP.exec(parts.name.slice(parts.slug.length + 1)) : null
      if (!parts || !ours || (parts.type === 'version' && !stamp)) {
        throw invalid(`Cannot put ${JSON.stringify(path)} into the archive: it is not a path of this store's archive.`, 'Pass a path archivedPaths() lists (…/archive/<reason>/<kind>/<slug>.md or …/archive/[forgotten/]versions/<kind>/<slug>.<stamp>.md).')
      }
      const parsed = parseFrontmatter(text)
      const content = contentOf(parsed.frontmatter, parsed.body)
      return locked(parts.kind, parts.slug, async (db, key) => {
        const present = await readArchivedRow(db, key, parts)
        if (present) return serializeFrontmatter(jsonObject(present.frontmatter), present.body) === serializeFrontmatter(content.frontmatter, content.body) ? 'there' : 'occupied'
        const now = clock.now().toISOString()
        if (parts.type === 'copy') {
          await db.query(
            `INSERT INTO docs_archived (agent, owner, kind, slug, reason, frontmatter, body, hash, archived_at) VALUES ($1, $2, $3, $4, $5, $6::json, $7, $8, $9)`,
            [...key, parts.reason, JSON.stringify(content.frontmatter), content.body, content.hash, now],
          )
        } else {
          // The time and the number of a version are the ones its name carries (`<slug>.<stamp>[-n].md`), as the file backend reads them.
          const [, day, hh, mm, ss, ms, n] = stamp as RegExpExecArray
          await db.query(
            `INSERT INTO docs_versions (agent, owner, kind, slug, name, archived_at, n, frontmatter, body, hash, retired_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json, $9, $10, $11)`,
            [...key, parts.name, `${day}T${hh}:${mm}:${ss}.${ms}Z`, Number(n ?? 1), JSON.stringify(content.frontmatter), content.body, content.hash, parts.retired ? now : null],
          )
        }
        return 'written'
      })
    },

    async problems(kinds = DOC_KINDS) {
      const problems: ParseProblem[] = []
      for (const kind of kinds) {
        // Profiles and prompt layers are reported once, by the agent's own store.
        if (owner !== 'agent' && homeOf(kind) !== 'tree') continue
        const [agent, ownerColumn] = keyOf(kind, '')
        // Rows are written parsed; only one edited by hand can hold frontmatter that is not an object.
        const { rows } = await pool.query<{ slug: string; frontmatter: unknown }>(
          `SELECT slug, frontmatter FROM docs_live WHERE agent = $1 AND owner = $2 AND kind = $3 AND json_typeof(frontmatter) <> 'object' ORDER BY slug COLLATE "C"`,
          [agent, ownerColumn, kind],
        )
        for (const row of rows) problems.push({ file: relOf(kind, row.slug), line: 1, text: JSON.stringify(row.frontmatter) ?? '', reason: 'the frontmatter is not a mapping' })
      }
      return problems
    },
  }
}
