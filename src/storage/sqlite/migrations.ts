/**
 * The SQLite schema, as numbered forward-only migrations embedded in the code (no files to ship
 * or lose). They are applied on open, in one write transaction, and recorded in
 * `schema_migrations`; a database that a newer engram has migrated further is refused rather than
 * half-understood.
 *
 * Never edit a migration that has shipped: add the next number.
 *
 * Not here, on purpose: the FTS5 table over `index_units.text` and the sqlite-vec `vec0` table.
 * Both depend on a feature probed at run time (and the vector table on the embedder's dimensions),
 * so the search index creates them itself (`search-index.ts`); they are derived data, rebuilt
 * from `index_units` whenever they are missing.
 */
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { SqliteHandle } from './database.ts'

export interface Migration {
  version: number
  name: string
  sql: string
}

const schemaV1 = `
-- Small key/value facts about this database (the embedder that produced the stored vectors, …).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- anna's LCM tables: lossless context ------------------------------------------------------------

CREATE TABLE ctx_conversations (
  id         INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  agent_id   TEXT NOT NULL,
  user_id    TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (session_id, agent_id)
);
CREATE INDEX ctx_conversations_by_agent ON ctx_conversations (agent_id, id);

-- Messages are never updated or deleted: seq is 1-based and dense per conversation.
CREATE TABLE ctx_messages (
  id              INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES ctx_conversations (id),
  seq             INTEGER NOT NULL,
  role            TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  name            TEXT,
  content         TEXT NOT NULL,
  token_count     INTEGER NOT NULL,
  created_at      TEXT NOT NULL,
  meta            TEXT, -- JSON object
  UNIQUE (conversation_id, seq)
);

-- Nodes of the summary DAG.
CREATE TABLE ctx_summaries (
  id                 TEXT PRIMARY KEY, -- sum_<hex>
  conversation_id    INTEGER NOT NULL REFERENCES ctx_conversations (id),
  kind               TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
  depth              INTEGER NOT NULL CHECK (depth >= 0),
  content            TEXT NOT NULL,
  token_count        INTEGER NOT NULL,
  source_token_count INTEGER NOT NULL,
  earliest_at        TEXT NOT NULL,
  latest_at          TEXT NOT NULL,
  method             TEXT NOT NULL CHECK (method IN ('llm-normal', 'llm-aggressive', 'extractive', 'deterministic')),
  created_at         TEXT NOT NULL
);
CREATE INDEX ctx_summaries_by_conversation ON ctx_summaries (conversation_id, depth);

-- The current context window. Positions are integers that only grow: an append takes max + 1,
-- a summary takes the first position of the run it replaces, so order is kept without
-- renumbering and gaps appear after compaction.
CREATE TABLE ctx_items (
  conversation_id INTEGER NOT NULL REFERENCES ctx_conversations (id),
  position        INTEGER NOT NULL,
  message_id      INTEGER REFERENCES ctx_messages (id),
  summary_id      TEXT REFERENCES ctx_summaries (id),
  PRIMARY KEY (conversation_id, position),
  CHECK ((message_id IS NULL) <> (summary_id IS NULL))
) WITHOUT ROWID;

-- Edges: the messages a leaf summary folds, in order.
CREATE TABLE ctx_summary_messages (
  summary_id TEXT NOT NULL REFERENCES ctx_summaries (id),
  message_id INTEGER NOT NULL REFERENCES ctx_messages (id),
  ord        INTEGER NOT NULL,
  PRIMARY KEY (summary_id, ord)
) WITHOUT ROWID;
CREATE INDEX ctx_summary_messages_by_message ON ctx_summary_messages (message_id);

-- Edges: the summaries a condensed summary folds, in order. anna calls the folded one the
-- "parent"; here it is named for what it is: summary_id folds folded_summary_id.
CREATE TABLE ctx_summary_parents (
  summary_id        TEXT NOT NULL REFERENCES ctx_summaries (id),
  folded_summary_id TEXT NOT NULL REFERENCES ctx_summaries (id),
  ord               INTEGER NOT NULL,
  PRIMARY KEY (summary_id, ord)
) WITHOUT ROWID;
CREATE INDEX ctx_summary_parents_by_folded ON ctx_summary_parents (folded_summary_id);

-- Per-user-per-agent notes (anna's ProfileStore).
CREATE TABLE ctx_agent_memory (
  user_id    TEXT NOT NULL,
  agent_id   TEXT NOT NULL,
  content    TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (user_id, agent_id)
) WITHOUT ROWID;

CREATE TABLE ctx_session_info (
  session_id TEXT NOT NULL,
  agent_id   TEXT NOT NULL,
  info       TEXT NOT NULL, -- JSON object
  updated_at TEXT NOT NULL,
  PRIMARY KEY (session_id, agent_id)
) WITHOUT ROWID;
CREATE INDEX ctx_session_info_by_agent ON ctx_session_info (agent_id, updated_at);

-- Self-improvement review: the highest seq reviewed per conversation.
CREATE TABLE ctx_review_marks (
  conversation_id INTEGER PRIMARY KEY REFERENCES ctx_conversations (id),
  reviewed_seq    INTEGER NOT NULL,
  updated_at      TEXT NOT NULL
);

-- The search index -------------------------------------------------------------------------------

-- One row per retrievable unit. rowid is explicit because the FTS5 and vector tables key on it.
CREATE TABLE index_units (
  rowid          INTEGER PRIMARY KEY,
  id             TEXT NOT NULL UNIQUE,
  kind           TEXT NOT NULL,
  text           TEXT NOT NULL,
  source         TEXT NOT NULL,
  provenance     TEXT NOT NULL DEFAULT '[]', -- JSON array of ids
  scope          TEXT,
  agent          TEXT,
  user_id        TEXT,
  created_at     TEXT NOT NULL,
  updated_at     TEXT,
  hash           TEXT NOT NULL,
  links          TEXT, -- JSON array
  meta           TEXT, -- JSON object
  access_count   INTEGER NOT NULL DEFAULT 0,
  last_access_at TEXT,
  -- Whether a vector is stored for the unit, whichever table holds it; lets the index blank the
  -- right hashes when vectors are dropped without reading a table whose module may be missing.
  has_vector     INTEGER NOT NULL DEFAULT 0
);
-- Filters on the search path (kinds, sources, time ranges, agent) must not scan the table.
CREATE INDEX index_units_by_kind ON index_units (kind, created_at);
CREATE INDEX index_units_by_source ON index_units (source);
CREATE INDEX index_units_by_created ON index_units (created_at);
CREATE INDEX index_units_by_agent ON index_units (agent, created_at);
CREATE INDEX index_units_by_user ON index_units (user_id, created_at);

-- Vectors when sqlite-vec is not available: Float32 bytes, searched by brute force in TypeScript.
CREATE TABLE index_vectors (
  rowid  INTEGER PRIMARY KEY REFERENCES index_units (rowid) ON DELETE CASCADE,
  vector BLOB NOT NULL,
  norm   REAL NOT NULL
);

-- Background jobs ----------------------------------------------------------------------------------

CREATE TABLE jobs_runs (
  id          INTEGER PRIMARY KEY,
  job         TEXT NOT NULL,
  agent       TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'failed')),
  details     TEXT NOT NULL DEFAULT '{}' -- JSON object
);
CREATE INDEX jobs_runs_by_job ON jobs_runs (job, agent, finished_at);
CREATE INDEX jobs_runs_by_finished ON jobs_runs (finished_at);
`

/** Every migration this engram knows, in order. */
export const MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: 'initial schema', sql: schemaV1 },
  {
    version: 2,
    name: 'memory confirmations',
    // Engrams the encoding gate held for the user's yes/no (copilot mode); they survive a restart.
    // Decided rows are kept (status, decided_at) as the record of what the user answered.
    sql: `
CREATE TABLE memory_confirmations (
  id         INTEGER PRIMARY KEY,
  agent      TEXT NOT NULL,
  project    TEXT NOT NULL DEFAULT '', -- the project folder for project-scope engrams, else ''
  scope      TEXT NOT NULL CHECK (scope IN ('global', 'project')),
  engram     TEXT NOT NULL, -- JSON Engram
  dedupe     TEXT NOT NULL, -- kind + normalised text: one pending row per memory
  reason     TEXT NOT NULL,
  queued_at  TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
  decided_at TEXT
);
CREATE UNIQUE INDEX memory_confirmations_pending_once ON memory_confirmations (agent, project, scope, dedupe) WHERE status = 'pending';
CREATE INDEX memory_confirmations_by_agent ON memory_confirmations (agent, status, id);
`,
  },
  {
    version: 3,
    name: 'owners',
    // Decision 0017: every indexed unit and every pending confirmation has an owner. What wave 1
    // recorded says whose a row is for messages, summaries and user profiles (their user); every
    // other row was the agent's. A confirmation also records the user whose session asked for it
    // (they are the one to answer); the one-pending-row rule holds per owner and asker.
    sql: `
ALTER TABLE index_units ADD COLUMN owner TEXT NOT NULL DEFAULT 'agent';
UPDATE index_units SET owner = 'user:' || user_id WHERE user_id IS NOT NULL AND user_id <> '' AND kind IN ('message', 'summary', 'user');
CREATE INDEX index_units_by_owner ON index_units (owner, agent);
ALTER TABLE memory_confirmations ADD COLUMN owner TEXT NOT NULL DEFAULT 'agent';
ALTER TABLE memory_confirmations ADD COLUMN asked_by TEXT NOT NULL DEFAULT '';
DROP INDEX memory_confirmations_pending_once;
CREATE UNIQUE INDEX memory_confirmations_pending_once ON memory_confirmations (agent, project, scope, owner, asked_by, dedupe) WHERE status = 'pending';
`,
  },
  {
    version: 4,
    name: 'lifecycle state',
    // State that decides future work (DESIGN principle 9), so any process can do it: sessions
    // and their activity, the previous heartbeat, counters, the queue of due work, stored turns.
    sql: `
-- One row per session: open until a boundary (idle, heartbeat, explicit end) closes it.
CREATE TABLE lifecycle_sessions (
  agent            TEXT NOT NULL,
  session_id       TEXT NOT NULL,
  user_id          TEXT,
  status           TEXT NOT NULL CHECK (status IN ('open', 'closed')),
  opened_at        TEXT NOT NULL, -- first activity of the current open period
  last_activity_at TEXT NOT NULL,
  turns            INTEGER NOT NULL DEFAULT 0,
  closed_at        TEXT,
  close_reason     TEXT,
  PRIMARY KEY (agent, session_id)
) WITHOUT ROWID;
-- maintain() asks for the open sessions quiet since an instant.
CREATE INDEX lifecycle_sessions_open ON lifecycle_sessions (agent, status, last_activity_at);

CREATE TABLE lifecycle_heartbeats (
  agent   TEXT PRIMARY KEY,
  last_at TEXT NOT NULL
) WITHOUT ROWID;

-- Named counters per (agent, user): '' is the user of sessions without one.
CREATE TABLE lifecycle_counters (
  agent      TEXT NOT NULL,
  user_id    TEXT NOT NULL,
  name       TEXT NOT NULL,
  value      INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (agent, user_id, name)
) WITHOUT ROWID;

-- Due work. A claim sets status running with a lease; a lease that expires (the process died)
-- makes the job claimable again, until max_attempts claims were made.
CREATE TABLE lifecycle_jobs (
  id           INTEGER PRIMARY KEY,
  agent        TEXT NOT NULL,
  kind         TEXT NOT NULL,
  dedupe_key   TEXT,
  payload      TEXT NOT NULL DEFAULT '{}', -- JSON object
  status       TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'skipped', 'failed')),
  run_after    TEXT NOT NULL,
  attempts     INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 3,
  lease_owner  TEXT,
  lease_until  TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  finished_at  TEXT,
  result       TEXT, -- JSON object
  error        TEXT
);
CREATE UNIQUE INDEX lifecycle_jobs_once ON lifecycle_jobs (agent, dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX lifecycle_jobs_due ON lifecycle_jobs (agent, status, run_after, id);

-- What each turn was given (its provenance), and which messages belong to which turn.
CREATE TABLE lifecycle_turns (
  agent      TEXT NOT NULL,
  session_id TEXT NOT NULL,
  turn       INTEGER NOT NULL,
  user_id    TEXT,
  message_id INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  type       TEXT NOT NULL,
  provenance TEXT NOT NULL, -- JSON object
  PRIMARY KEY (agent, session_id, turn)
) WITHOUT ROWID;
-- Identity extraction reads a user's latest turns over all their sessions.
CREATE INDEX lifecycle_turns_by_user ON lifecycle_turns (agent, user_id, started_at);
CREATE TABLE lifecycle_turn_messages (
  message_id INTEGER NOT NULL,
  agent      TEXT NOT NULL,
  session_id TEXT NOT NULL,
  turn       INTEGER NOT NULL,
  PRIMARY KEY (agent, message_id)
) WITHOUT ROWID;
CREATE INDEX lifecycle_turn_messages_by_turn ON lifecycle_turn_messages (agent, session_id, turn);
`,
  },
  {
    version: 6,
    name: 'home migrations',
    // Work on the files of a home that runs once, after the schema (decision 0024: moving what
    // wave 1 recorded as a user's into their tree). Its row says it is done and what it did.
    sql: `
CREATE TABLE home_migrations (
  name    TEXT PRIMARY KEY,
  done_at TEXT NOT NULL,
  report  TEXT NOT NULL -- JSON object
) WITHOUT ROWID;
`,
  },
  {
    version: 7,
    name: 'search index without date-ordered indexes',
    // Units arrive in any date order (a reindex, an import), so every index ending in created_at
    // took each insert to a random page: at 1M units they were 3/4 of the time of building the
    // index (decision 0042). Searches rank in FTS5 and join units by rowid, never through them;
    // single-column indexes (appended to per kind, agent, user) keep the filters' lookups.
    sql: `
DROP INDEX index_units_by_kind;
DROP INDEX index_units_by_created;
DROP INDEX index_units_by_agent;
DROP INDEX index_units_by_user;
CREATE INDEX index_units_by_kind ON index_units (kind);
CREATE INDEX index_units_by_agent ON index_units (agent);
CREATE INDEX index_units_by_user ON index_units (user_id);
`,
  },
])

export const LATEST_SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0)

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`

function currentVersion(handle: SqliteHandle): number {
  const table = handle.db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").get()
  if (!table) return 0
  const row = handle.db.prepare('SELECT max(version) AS version FROM schema_migrations').get() as { version: number | null }
  return row.version ?? 0
}

function refuseNewer(handle: SqliteHandle, version: number): void {
  if (version <= LATEST_SCHEMA_VERSION) return
  throw new EngramError({
    code: ErrorCode.unsupported,
    category: 'user',
    message: `${handle.path} has schema version ${version}, written by a newer engram; this engram knows versions up to ${LATEST_SCHEMA_VERSION}.`,
    fix: 'Upgrade engram to the version that wrote this home, or point --home / ENGRAM_HOME at another home.',
    details: { path: handle.path, version, known: LATEST_SCHEMA_VERSION },
  })
}

/** The schema version of the file, without changing it; refuses a newer schema. */
export function readSchemaVersion(handle: SqliteHandle): number {
  const version = currentVersion(handle)
  refuseNewer(handle, version)
  return version
}

/**
 * Apply every pending migration in one IMMEDIATE transaction and return the resulting version.
 * The version is re-read inside the transaction, so two processes opening a fresh file at once
 * apply each migration exactly once.
 */
export function applyMigrations(handle: SqliteHandle, clock: Clock): number {
  // Fast path without the write lock: the usual open finds the schema up to date.
  const seen = currentVersion(handle)
  refuseNewer(handle, seen)
  if (seen === LATEST_SCHEMA_VERSION) return seen
  return handle.transaction(() => {
    handle.db.exec(createMigrationsTable)
    const version = currentVersion(handle)
    refuseNewer(handle, version)
    const record = handle.db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
    for (const migration of MIGRATIONS) {
      if (migration.version <= version) continue
      handle.db.exec(migration.sql)
      record.run(migration.version, migration.name, clock.now().toISOString())
    }
    return LATEST_SCHEMA_VERSION
  })
}
