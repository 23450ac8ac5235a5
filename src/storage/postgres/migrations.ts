/**
 * The PostgreSQL schema, as numbered forward-only migrations embedded in the code, like the SQLite
 * ones (`../sqlite/migrations.ts`) but numbered on their own: the two schemas differ in types
 * (timestamptz, json, identity columns) and grow seam by seam. Applied on open, all pending ones in
 * one transaction that holds an advisory lock of the schema, and recorded in `schema_migrations`;
 * a schema that a newer engram migrated further is refused rather than half-understood.
 *
 * Never edit a migration that has shipped: add the next number.
 *
 * Instants are `timestamptz` (the contracts' ISO-8601 instants, compared as instants); JSON is
 * `json`, which keeps the text engram wrote (jsonb would refuse a `\u0000` a payload may carry).
 */
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { advisoryKey } from './advisory-key.ts'
import type { PgPool, PgQueryable } from './driver.ts'
import { convertPostingsToBlocks, fillBlockPeaks, fillUnitCounts } from './index-blocks.ts'
import { resegmentPostings } from './resegment-index.ts'

interface Migration {
  version: number
  name: string
  sql: string
  /** Work after `sql` that SQL alone cannot do, in the same transaction. */
  after?: (client: PgQueryable, schema: string) => Promise<void>
}

const jobsAndLifecycle = `
-- Background job runs (the Jobs seam): what ran when, so scheduled jobs stay idempotent.
CREATE TABLE jobs_runs (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job         text NOT NULL,
  agent       text NOT NULL,
  started_at  timestamptz NOT NULL,
  finished_at timestamptz NOT NULL,
  status      text NOT NULL CHECK (status IN ('ok', 'skipped', 'failed')),
  details     json NOT NULL DEFAULT '{}'
);
CREATE INDEX jobs_runs_by_job ON jobs_runs (job, agent, finished_at);
CREATE INDEX jobs_runs_by_finished ON jobs_runs (finished_at);

-- Lifecycle state (decision 0022): one row per session, open until a boundary closes it.
CREATE TABLE lifecycle_sessions (
  agent            text NOT NULL,
  session_id       text NOT NULL,
  user_id          text,
  status           text NOT NULL CHECK (status IN ('open', 'closed')),
  opened_at        timestamptz NOT NULL,
  last_activity_at timestamptz NOT NULL,
  turns            integer NOT NULL DEFAULT 0,
  closed_at        timestamptz,
  close_reason     text,
  PRIMARY KEY (agent, session_id)
);
CREATE INDEX lifecycle_sessions_open ON lifecycle_sessions (agent, status, last_activity_at);

CREATE TABLE lifecycle_heartbeats (
  agent   text PRIMARY KEY,
  last_at timestamptz NOT NULL
);

-- Named counters per (agent, user): '' is the user of sessions without one.
CREATE TABLE lifecycle_counters (
  agent      text NOT NULL,
  user_id    text NOT NULL,
  name       text NOT NULL,
  value      bigint NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (agent, user_id, name)
);

-- Due work, claimed with a lease (FOR UPDATE SKIP LOCKED: claimers never wait on each other).
-- NULL keys are distinct, so the unique constraint holds only for keyed jobs.
CREATE TABLE lifecycle_jobs (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent        text NOT NULL,
  kind         text NOT NULL,
  dedupe_key   text,
  payload      json NOT NULL DEFAULT '{}',
  status       text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'skipped', 'failed')),
  run_after    timestamptz NOT NULL,
  attempts     integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 3,
  lease_owner  text,
  lease_until  timestamptz,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL,
  finished_at  timestamptz,
  result       json,
  error        text,
  UNIQUE (agent, dedupe_key)
);
CREATE INDEX lifecycle_jobs_due ON lifecycle_jobs (agent, status, run_after, id);

-- What each turn was given, and which messages belong to which turn.
CREATE TABLE lifecycle_turns (
  agent      text NOT NULL,
  session_id text NOT NULL,
  turn       integer NOT NULL,
  user_id    text,
  message_id bigint NOT NULL,
  started_at timestamptz NOT NULL,
  type       text NOT NULL,
  provenance json NOT NULL,
  PRIMARY KEY (agent, session_id, turn)
);
CREATE INDEX lifecycle_turns_by_user ON lifecycle_turns (agent, user_id, started_at);
CREATE TABLE lifecycle_turn_messages (
  message_id bigint NOT NULL,
  agent      text NOT NULL,
  session_id text NOT NULL,
  turn       integer NOT NULL,
  PRIMARY KEY (agent, message_id)
);
CREATE INDEX lifecycle_turn_messages_by_turn ON lifecycle_turn_messages (agent, session_id, turn);
`

// The activity log (decision 0035): one row per event of one owner's log. The file backend's ref
// activity/<day>.jsonl#L<line> maps to (day, line): each (agent, owner, day) counts its events in
// activity_days, so line numbers are dense from 1 per day, given at append in arrival order, and
// never reused. Owner 'shared' is home-wide: its rows have agent ''.
const activityLog = `
CREATE TABLE activity_days (
  agent text NOT NULL,
  owner text NOT NULL,
  day   text NOT NULL,
  lines integer NOT NULL,
  PRIMARY KEY (agent, owner, day)
);
-- record: the event as the file backend writes a line (seed field order, empty fields dropped,
-- tool data cut; ts as written); at: its instant, for ranges and order.
CREATE TABLE activity_events (
  agent  text NOT NULL,
  owner  text NOT NULL,
  day    text NOT NULL,
  line   integer NOT NULL,
  at     timestamptz NOT NULL,
  type   text NOT NULL,
  record json NOT NULL,
  PRIMARY KEY (agent, owner, day, line)
);
CREATE INDEX activity_events_by_time ON activity_events (agent, owner, at, day, line);
`

// Pending confirmations (copilot mode), as in SQLite's memory_confirmations: project is the
// project folder of project-scope engrams, else ''; asked_by the user whose session asked ('' for
// none); engram the JSON Engram, or {"document": …} for a promoted memory file; one pending row
// per memory, owner and asker. dedupe is the sha256 of SQLite's key (which holds NUL separators,
// and PostgreSQL text cannot).
const confirmations = `
CREATE TABLE memory_confirmations (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent      text NOT NULL,
  project    text NOT NULL DEFAULT '',
  scope      text NOT NULL CHECK (scope IN ('global', 'project')),
  owner      text NOT NULL,
  asked_by   text NOT NULL DEFAULT '',
  engram     text NOT NULL,
  dedupe     text NOT NULL,
  reason     text NOT NULL,
  queued_at  timestamptz NOT NULL,
  status     text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
  decided_at timestamptz
);
CREATE UNIQUE INDEX memory_confirmations_pending_once ON memory_confirmations (agent, project, scope, owner, asked_by, dedupe) WHERE status = 'pending';
CREATE INDEX memory_confirmations_by_agent ON memory_confirmations (agent, status, id);
CREATE INDEX memory_confirmations_by_asker ON memory_confirmations (asked_by);
CREATE INDEX memory_confirmations_by_owner ON memory_confirmations (owner);
`

// Documents (decision 0035): the live set, the archived copies and the saved versions of each
// (agent, owner, kind, slug), in place of the file backend's <tree>/<kind>/<slug>.md,
// archive/<reason>/ and archive/versions/. Frontmatter is json, not jsonb: json keeps the key
// order, so an export writes the same file. A version's name is its file name there
// (<slug>.<stamp>[-n].md); retired_at marks the ones version retention moved out of versions().
const documents = `
CREATE TABLE docs_live (
  agent       text NOT NULL,
  owner       text NOT NULL,
  kind        text NOT NULL,
  slug        text NOT NULL,
  frontmatter json NOT NULL,
  body        text NOT NULL,
  hash        text NOT NULL,
  modified_at timestamptz NOT NULL,
  PRIMARY KEY (agent, owner, kind, slug)
);
CREATE TABLE docs_archived (
  agent       text NOT NULL,
  owner       text NOT NULL,
  kind        text NOT NULL,
  slug        text NOT NULL,
  reason      text NOT NULL CHECK (reason IN ('forgotten', 'merged', 'procedure_versions')),
  frontmatter json NOT NULL,
  body        text NOT NULL,
  hash        text NOT NULL,
  archived_at timestamptz NOT NULL,
  PRIMARY KEY (agent, owner, kind, slug, reason)
);
CREATE TABLE docs_versions (
  agent       text NOT NULL,
  owner       text NOT NULL,
  kind        text NOT NULL,
  slug        text NOT NULL,
  name        text NOT NULL,
  archived_at timestamptz NOT NULL,
  n           integer NOT NULL,
  frontmatter json NOT NULL,
  body        text NOT NULL,
  hash        text NOT NULL,
  reason      text,
  retired_at  timestamptz,
  retention   text,
  PRIMARY KEY (agent, owner, kind, slug, name)
);
`

// Engram files (decision 0035): each memory file of one (agent, owner, scope, project) is one row
// holding its markdown text, read and written with the file backend's codec, so entries behave the
// same and an export writes the text as the file. file: 'profile', 'rules', 'lessons' or
// 'topics/<slug>'. Project-scope rows have agent '' (a project's memory folder is every agent's)
// and project the project; global ones project ''. Shared rows have agent ''.
const engramFiles = `
CREATE TABLE engram_files (
  agent      text NOT NULL,
  owner      text NOT NULL,
  scope      text NOT NULL CHECK (scope IN ('global', 'project')),
  project    text NOT NULL DEFAULT '',
  file       text NOT NULL,
  text       text NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (agent, owner, scope, project, file)
);
`

// The context store (anna's LCM tables, as SQLite's ctx_*; decision 0035). Ids, seqs, positions
// and counts are bigint, read back as numbers. Instants engram stamps (created_at of conversations
// and summaries) are timestamptz; instants a caller gives (a message's at, a summary's earliest_at
// and latest_at) are kept as the text given, as SQLite keeps them, so a message reads back exactly
// as it was appended. escaped: the row's name, content and at hold a NUL, which text cannot, and
// are stored with \ written \\ and NUL written \0 (see context-store.ts); rows without one are
// stored as they are. Appends lock the conversation row and take max(seq) and max(position) + 1
// under that lock; the unique keys are the backstop.
const contextStore = `
CREATE TABLE ctx_conversations (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text NOT NULL,
  agent_id   text NOT NULL,
  user_id    text,
  created_at timestamptz NOT NULL,
  UNIQUE (session_id, agent_id)
);
CREATE INDEX ctx_conversations_by_agent ON ctx_conversations (agent_id, id);
CREATE INDEX ctx_conversations_by_user ON ctx_conversations (user_id) WHERE user_id IS NOT NULL;

CREATE TABLE ctx_messages (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  conversation_id bigint NOT NULL REFERENCES ctx_conversations (id),
  seq             bigint NOT NULL CHECK (seq >= 1),
  role            text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  name            text,
  content         text NOT NULL,
  escaped         boolean NOT NULL DEFAULT false,
  token_count     bigint NOT NULL,
  created_at      text NOT NULL,
  meta            json,
  UNIQUE (conversation_id, seq)
);

CREATE TABLE ctx_summaries (
  id                 text PRIMARY KEY,
  conversation_id    bigint NOT NULL REFERENCES ctx_conversations (id),
  kind               text NOT NULL CHECK (kind IN ('leaf', 'condensed')),
  depth              bigint NOT NULL CHECK (depth >= 0),
  content            text NOT NULL,
  escaped            boolean NOT NULL DEFAULT false,
  token_count        bigint NOT NULL,
  source_token_count bigint NOT NULL,
  earliest_at        text NOT NULL,
  latest_at          text NOT NULL,
  method             text NOT NULL CHECK (method IN ('llm-normal', 'llm-aggressive', 'extractive', 'deterministic')),
  created_at         timestamptz NOT NULL
);
CREATE INDEX ctx_summaries_by_conversation ON ctx_summaries (conversation_id, depth);

-- The current context window: positions only grow (an append takes max + 1, a summary the first
-- position of the run it replaces), so gaps appear after compaction.
CREATE TABLE ctx_items (
  conversation_id bigint NOT NULL REFERENCES ctx_conversations (id),
  position        bigint NOT NULL,
  message_id      bigint REFERENCES ctx_messages (id),
  summary_id      text REFERENCES ctx_summaries (id),
  PRIMARY KEY (conversation_id, position),
  CHECK ((message_id IS NULL) <> (summary_id IS NULL))
);
-- For the foreign-key checks when an erasure deletes messages and summaries.
CREATE INDEX ctx_items_by_message ON ctx_items (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX ctx_items_by_summary ON ctx_items (summary_id) WHERE summary_id IS NOT NULL;

CREATE TABLE ctx_summary_messages (
  summary_id text NOT NULL REFERENCES ctx_summaries (id),
  message_id bigint NOT NULL REFERENCES ctx_messages (id),
  ord        integer NOT NULL,
  PRIMARY KEY (summary_id, ord)
);
CREATE INDEX ctx_summary_messages_by_message ON ctx_summary_messages (message_id);

-- summary_id folds folded_summary_id (anna calls the folded one the "parent").
CREATE TABLE ctx_summary_parents (
  summary_id        text NOT NULL REFERENCES ctx_summaries (id),
  folded_summary_id text NOT NULL REFERENCES ctx_summaries (id),
  ord               integer NOT NULL,
  PRIMARY KEY (summary_id, ord)
);
CREATE INDEX ctx_summary_parents_by_folded ON ctx_summary_parents (folded_summary_id);
`

const searchIndex = `
-- The search index (the SearchIndex seam): one row per retrievable unit, ranked by a BM25 computed
-- exactly as the embedded backend's FTS5 computes it (search-index.ts says how).
CREATE TABLE index_units (
  rowid          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id             text NOT NULL UNIQUE,
  kind           text NOT NULL,
  text           text NOT NULL,
  source         text NOT NULL,
  provenance     json NOT NULL,
  scope          text,
  agent          text,
  user_id        text,
  owner          text NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz,
  hash           text NOT NULL,
  links          json,
  meta           json,
  access_count   integer NOT NULL DEFAULT 0,
  last_access_at timestamptz,
  has_vector     boolean NOT NULL DEFAULT false,
  -- BM25's document length: the FTS5 tokens of all five fields (own, near, far, related, kind).
  token_count    integer NOT NULL,
  -- The distinct tokens of own, near, far and related (what a query matches), and per token its
  -- count in each of the four: {"token": [own, near, far, related]}.
  terms          text[] NOT NULL,
  tf             jsonb NOT NULL
) WITH (toast_tuple_target = 8160);
-- toast_tuple_target: rows up to a page stay uncompressed, so reading a query's tokens out of tf
-- does not decompress it once per token (measured: 6 lookups over 2,471 rows, 13 ms → 5 ms).
-- fastupdate off: a pending list of recent inserts is scanned whole by every query until VACUUM
-- merges it (measured: a 6-term query's index scan took 6.7 ms instead of 0.4 ms after a bulk load).
CREATE INDEX index_units_terms ON index_units USING gin (terms) WITH (fastupdate = off);
CREATE INDEX index_units_source ON index_units (source);
CREATE INDEX index_units_kind ON index_units (kind, created_at);
CREATE INDEX index_units_owner ON index_units (owner, agent);
CREATE INDEX index_units_user ON index_units (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX index_units_created ON index_units (created_at);
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
    ALTER TABLE index_units ADD COLUMN embedding vector;
  END IF;
END $$;

-- Per token: units holding it in any matched field (BM25's n, and the posting counts that prune a
-- query) and in their own text (documentFrequencies, vocabulary). Kept in each writing transaction.
CREATE TABLE index_terms (
  term      text PRIMARY KEY,
  units_any integer NOT NULL,
  units_own integer NOT NULL
);

-- BM25's N and total length, and the units with a vector: one row, updated last in each writing
-- transaction (after every other lock it takes), so concurrent writers queue on it without deadlocks.
CREATE TABLE index_stats (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  units    bigint NOT NULL,
  tokens   bigint NOT NULL,
  vectors  bigint NOT NULL
);
INSERT INTO index_stats (units, tokens, vectors) VALUES (0, 0, 0);

-- Speaker names seen on message units, per agent ('' for none): the participants.
CREATE TABLE index_names (
  agent text NOT NULL DEFAULT '',
  name  text NOT NULL,
  PRIMARY KEY (agent, name)
);

-- The embedder whose vectors the index holds, and their size.
CREATE TABLE index_meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);
`

const searchPostings = `
-- The search index's inverted index (search-index.ts says how it ranks). Migration 7 kept each
-- unit's counts of all its tokens in one jsonb (tf, with a GIN on terms): a query read the whole
-- 5–15 KB value of every candidate (a message's own, near, far and related words) to pick out the
-- counts of 2–6 tokens — 140–190 ms of a ~230 ms priming on a 1,000-turn conversation. A posting
-- per (token, unit) holds what the score reads of that pair: the token's count in each matched
-- field, the unit's length and its kind. The primary key includes them, so a query reads its
-- tokens' postings side by side in the index (an index-only scan where VACUUM has marked the pages
-- all-visible: 0.3 ms for 1,200 postings against 10 ms through the heap) and touches no unit row
-- until the few it returns. Size, measured at 100k synthetic units (2.3M postings): heap 164 MB,
-- primary key and rowid index 267 MB, index_units 45 MB (238 MB with tf and the GIN).
CREATE TABLE index_postings (
  rowid       bigint NOT NULL,
  own         integer NOT NULL,
  near        integer NOT NULL,
  far         integer NOT NULL,
  related     integer NOT NULL,
  -- BM25's document length, the unit's (index_units.token_count), so scoring reads no unit row.
  token_count integer NOT NULL,
  -- The unit's kind, so a kinds filter (a skill lookup) drops postings in the scan.
  kind        text NOT NULL,
  term        text NOT NULL
) WITH (autovacuum_vacuum_insert_scale_factor = 0.02);
-- Vacuumed after 2% new rows rather than 20%: an index-only scan reads the heap for postings on
-- pages VACUUM has not yet marked all-visible.
-- Units written before this migration: their postings from their tf.
INSERT INTO index_postings (term, rowid, own, near, far, related, token_count, kind)
SELECT t.key, u.rowid, (t.value ->> 0)::integer, (t.value ->> 1)::integer, (t.value ->> 2)::integer, (t.value ->> 3)::integer, u.token_count, u.kind
FROM index_units u CROSS JOIN LATERAL jsonb_each(u.tf) AS t
ORDER BY t.key COLLATE "C", u.rowid;
ALTER TABLE index_postings ADD PRIMARY KEY (term, rowid) INCLUDE (own, near, far, related, token_count, kind);
-- A unit's postings, to delete them with it (and undo its share of index_terms).
CREATE INDEX index_postings_rowid ON index_postings (rowid);
-- The postings replace tf and its GIN; the wide-row setting served reading tf. (An existing
-- database gets the dropped columns' space back as rows are rewritten, or with VACUUM FULL.)
DROP INDEX index_units_terms;
ALTER TABLE index_units DROP COLUMN terms, DROP COLUMN tf;
ALTER TABLE index_units RESET (toast_tuple_target);
`

const searchBlocks = `
-- The postings as packed blocks (index-blocks.ts, decision 0091): migration 8's row per posting
-- with a primary key repeating its counts cost ~180 bytes a posting (1,185 MB at 100k synthetic
-- units, 12 GB at 1M); a block holds up to 128 postings of one term as varints, ~8 bytes each.
-- Rows are only inserted and deleted, never updated by another writer: document frequencies are
-- the sums of a term's blocks' units (postings) and own (postings in the units' own words).
CREATE TABLE index_blocks (
  term  text NOT NULL,
  first bigint NOT NULL,
  last  bigint NOT NULL,
  units integer NOT NULL,
  own   integer NOT NULL,
  data  bytea NOT NULL
) WITH (autovacuum_vacuum_insert_scale_factor = 0.02);
-- By term and last rowid: a query reads its terms' blocks, document frequencies sum units and own
-- here, and a rewrite of recent units finds their blocks among those ending at or after them.
CREATE INDEX index_blocks_term ON index_blocks (term, last) INCLUDE (first, units, own);
-- A writer finds the small blocks of its terms to merge through this (a few per term at most).
CREATE INDEX index_blocks_small ON index_blocks (term) WHERE units < 32;
-- A unit's distinct matched terms, separated by spaces: where its postings are, to cut them out.
ALTER TABLE index_units ADD COLUMN terms text NOT NULL DEFAULT '';
`

/** After migration 9's tables: re-cut old unsegmented postings (decision 0076), convert, and drop what the blocks replace. */
async function toBlocks(client: PgQueryable, schema: string): Promise<void> {
  await resegmentPostings(client, schema)
  await convertPostingsToBlocks(client)
  await client.query(`DROP TABLE index_postings;
DROP TABLE index_terms;
-- The statistics become a row per writing transaction, summed when read (index-blocks.ts).
ALTER TABLE index_stats DROP COLUMN only_row;`)
}

const searchTombstones = `
-- Rewrites and removals as tombstones (index-compaction.ts, decision 0094): a unit's old postings
-- are written as a negative block (units and own negated) that readers subtract, instead of being
-- cut out of blocks other writers share. A unit row keeps its terms' counts (own, near, far and
-- related per term as varints, in the order of terms), so its old postings are known without
-- reading blocks; the sweep finds the terms that have tombstones through the partial index.
ALTER TABLE index_units ADD COLUMN counts bytea NOT NULL DEFAULT '\\x';
CREATE INDEX index_blocks_tombstones ON index_blocks (term COLLATE "C") WHERE units < 0;
-- A count per unit kind, raised in the transaction that adds, changes or removes a unit of it
-- (SearchIndex.stamp, decision 0094): a reader keeps the rules it listed until it changes.
-- Messages have none (every append would queue on it): their stamp is never equal twice.
CREATE TABLE index_stamps (
  kind text PRIMARY KEY,
  n    bigint NOT NULL
);
`

const searchPeaks = `
-- Each block's peaks (index-blocks.ts, decision 0095): the postings no other of the block
-- outscores for any query of its term, a few bytes that bound the block's best score. A query of
-- one common word reads its blocks' peaks (in the covering index, so without their postings),
-- then the postings of the blocks that could still reach its best, best bound first.
ALTER TABLE index_blocks ADD COLUMN peaks bytea;
DROP INDEX index_blocks_term;
CREATE INDEX index_blocks_term ON index_blocks (term, last) INCLUDE (first, units, own, peaks);
`

/** Every migration this engram knows, in order. */
const MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: 'jobs and lifecycle state', sql: jobsAndLifecycle },
  { version: 2, name: 'activity log', sql: activityLog },
  { version: 3, name: 'confirmations', sql: confirmations },
  { version: 4, name: 'documents', sql: documents },
  { version: 5, name: 'engram files', sql: engramFiles },
  { version: 6, name: 'context store', sql: contextStore },
  { version: 7, name: 'search index', sql: searchIndex },
  { version: 8, name: 'search postings', sql: searchPostings },
  { version: 9, name: 'search blocks', sql: searchBlocks, after: toBlocks },
  { version: 10, name: 'search tombstones', sql: searchTombstones, after: fillUnitCounts },
  { version: 11, name: 'search block peaks', sql: searchPeaks, after: fillBlockPeaks },
])

export const LATEST_POSTGRES_SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0)

async function currentVersion(db: PgQueryable, schema: string): Promise<number> {
  const { rows } = await db.query<{ present: boolean }>(`SELECT to_regclass(format('%I.schema_migrations', $1::text)) IS NOT NULL AS present`, [schema])
  if (!rows[0]?.present) return 0
  const version = await db.query<{ version: number | null }>(`SELECT max(version) AS version FROM "${schema}".schema_migrations`)
  return version.rows[0]?.version ?? 0
}

function refuseNewer(version: number, location: string): void {
  if (version <= LATEST_POSTGRES_SCHEMA_VERSION) return
  throw new EngramError({
    code: ErrorCode.unsupported,
    category: 'user',
    message: `${location} has schema version ${version}, written by a newer engram; this engram knows versions up to ${LATEST_POSTGRES_SCHEMA_VERSION}.`,
    fix: 'Upgrade engram to the version that migrated this database, or point storage.url / ENGRAM_DATABASE_URL at another database or schema.',
    details: { location, version, known: LATEST_POSTGRES_SCHEMA_VERSION },
  })
}

/**
 * Create `schema` when missing and apply every pending migration in one transaction; returns the
 * resulting version. The transaction first takes an advisory lock of the schema and re-reads the
 * version under it, so processes opening a fresh database at once apply each migration once.
 */
export async function applyPostgresMigrations(
  pool: PgPool,
  options: { schema: string; location: string; clock: Clock; /** Stop after this version (tests of a migration over older rows). */ upTo?: number },
): Promise<number> {
  const { schema, location } = options
  const target = Math.min(options.upTo ?? LATEST_POSTGRES_SCHEMA_VERSION, LATEST_POSTGRES_SCHEMA_VERSION)
  // Fast path without the lock: the usual open finds the schema up to date.
  const seen = await currentVersion(pool, schema)
  refuseNewer(seen, location)
  if (seen >= target) return seen
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryKey(schema, 'engram:migrations').key])
    // Only when missing: CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege on the
    // database, which a role that was given an existing schema may not have.
    const missing = await client.query<{ missing: boolean }>('SELECT to_regnamespace($1) IS NULL AS missing', [`"${schema}"`])
    if (missing.rows[0]?.missing) await client.query(`CREATE SCHEMA "${schema}"`)
    await client.query(`SET LOCAL search_path TO "${schema}", public`)
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL
    )`)
    const version = await currentVersion(client, schema)
    refuseNewer(version, location)
    for (const migration of MIGRATIONS) {
      if (migration.version <= version || migration.version > target) continue
      await client.query(migration.sql)
      await migration.after?.(client, schema)
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        options.clock.now().toISOString(),
      ])
    }
    await client.query('COMMIT')
    return Math.max(version, target)
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError
    })
    throw error
  } finally {
    client.release(broken)
  }
}
