/**
 * The one configuration schema. Every setting has a dotted key (as in `config.json`, nested), an
 * `ENGRAM_*` environment variable, a type, a default and a description; the docs table and
 * `engram config` are generated from this list.
 */
import { LOG_LEVELS } from '../core/logger.ts'

export type SettingType =
  | { kind: 'string' }
  | { kind: 'secret' }
  | { kind: 'path' }
  | { kind: 'integer'; min?: number; max?: number }
  | { kind: 'number'; min?: number; max?: number }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: readonly string[] }

export interface SettingSpec {
  key: string
  env: string
  type: SettingType
  /** `undefined` means "not set" (the feature is off or resolved at run time). */
  default: string | number | boolean | undefined
  description: string
}

const s = (
  key: string,
  env: string,
  type: SettingType,
  defaultValue: SettingSpec['default'],
  description: string,
): SettingSpec => ({ key, env, type, default: defaultValue, description })

export const LLM_PROVIDERS = ['none', 'openai', 'anthropic', 'openai-compatible'] as const
export type LlmProviderName = (typeof LLM_PROVIDERS)[number]
export const EMBED_PROVIDERS = ['offline', 'openai-compatible', 'onnx', 'none'] as const
export type EmbedProviderName = (typeof EMBED_PROVIDERS)[number]
export const MEMORY_MODES = ['autopilot', 'copilot', 'off'] as const
export type MemoryMode = (typeof MEMORY_MODES)[number]

export const SETTINGS: readonly SettingSpec[] = [
  s('home', 'ENGRAM_HOME', { kind: 'path' }, undefined, 'The engram home folder (default ~/.engram).'),
  s('agent', 'ENGRAM_AGENT', { kind: 'string' }, 'default', 'Which agent (mind) in the home to open.'),
  s('project', 'ENGRAM_PROJECT', { kind: 'path' }, undefined, 'Project folder whose .engram/ holds project-scope memory.'),
  s('storage.url', 'ENGRAM_DATABASE_URL', { kind: 'secret' }, undefined,
    'PostgreSQL (15 or newer, with pgvector) to keep the memory in instead of the home folder (postgres://user:password@host:5432/database): every process on every host that opens it shares one memory. The home still holds reply journals, skills and config. docs/scale-out.md.'),
  s('storage.schema', 'ENGRAM_DATABASE_SCHEMA', { kind: 'string' }, 'engram',
    'Schema of that database holding engram\'s tables (created and migrated on open); deployments sharing one database use one schema each.'),
  s('memory.mode', 'ENGRAM_MEMORY_MODE', { kind: 'enum', values: MEMORY_MODES }, 'autopilot',
    'Encoding gate: autopilot saves everything, copilot asks before saving what is not high-confidence, off saves nothing.'),
  s('memory.extractFromTurns', 'ENGRAM_MEMORY_EXTRACT_FROM_TURNS', { kind: 'boolean' }, false,
    'Extract what the user states about themselves, their preferences, standing instructions and facts of their world from each turn\'s user message, at the end of the turn in the background, into that user\'s own memory through the encoding gate (memory.mode applies): with the fast model when one is configured, else by offline rules (marked method: rules; English, and standing instructions and preferences in Japanese, Chinese, Korean, German, French and Spanish: decision 0077). Off by default: a host that manages memory itself or lets the model call memorize would get memories it did not ask for. Decision 0066.'),
  s('memory.maxFileBytes', 'ENGRAM_MEMORY_MAX_FILE_BYTES', { kind: 'integer', min: 1024 }, 8 * 1024 * 1024,
    'Largest memory file (markdown, activity log, skill file) engram reads, in bytes; a larger one is skipped, kept as it is and reported (engram status, doctor, the turn), never read whole and never written over (except a versioned overwrite of a knowledge, procedure or state document, whose old bytes the archive keeps).'),
  s('memory.episodic', 'ENGRAM_EPISODIC_MEMORY', { kind: 'boolean' }, true,
    'Episodic memory (the seed\'s ANTON_EPISODIC_MEMORY): sessions log what was said and done (messages received, replies, tool calls, DMs and channel posts) to the activity log, and boundaries write episodes of it. false logs none of it, so no episode, sleep replay, procedure outcome or weekly pattern comes from new sessions; what was logged before stays searchable (recall), and the conversation itself is still kept for the context window. Memory writes, errors and heartbeats are still recorded.'),
  s('llm.provider', 'ENGRAM_LLM_PROVIDER', { kind: 'enum', values: LLM_PROVIDERS }, 'none',
    'LLM used for summaries, consolidation and extraction; none = deterministic offline paths.'),
  s('llm.baseUrl', 'ENGRAM_LLM_BASE_URL', { kind: 'string' }, undefined, 'Base URL of the LLM API (required for openai-compatible, e.g. http://localhost:11434/v1).'),
  s('llm.apiKey', 'ENGRAM_LLM_API_KEY', { kind: 'secret' }, undefined, 'API key for the LLM provider.'),
  s('llm.model', 'ENGRAM_LLM_MODEL', { kind: 'string' }, undefined, 'Model for the planning tier (consolidation, compaction).'),
  s('llm.fastModel', 'ENGRAM_LLM_FAST_MODEL', { kind: 'string' }, undefined, 'Model for the fast tier (summaries, extraction); defaults to llm.model.'),
  s('llm.timeoutMs', 'ENGRAM_LLM_TIMEOUT_MS', { kind: 'integer', min: 1 }, 60_000, 'Timeout of one LLM call, in milliseconds.'),
  s('llm.maxRetries', 'ENGRAM_LLM_MAX_RETRIES', { kind: 'integer', min: 0, max: 10 }, 2, 'Retries of a failed LLM call (5xx, network).'),
  s('embed.provider', 'ENGRAM_EMBED_PROVIDER', { kind: 'enum', values: EMBED_PROVIDERS }, 'offline',
    'Embedder for dense recall: offline needs nothing, openai-compatible calls /v1/embeddings, onnx loads a local model folder, none disables vectors.'),
  s('embed.baseUrl', 'ENGRAM_EMBED_BASE_URL', { kind: 'string' }, undefined, 'Base URL of an OpenAI-compatible embeddings API.'),
  s('embed.apiKey', 'ENGRAM_EMBED_API_KEY', { kind: 'secret' }, undefined, 'API key for the embeddings API.'),
  s('embed.model', 'ENGRAM_EMBED_MODEL', { kind: 'string' }, undefined, 'Embedding model name.'),
  s('embed.dimensions', 'ENGRAM_EMBED_DIMENSIONS', { kind: 'integer', min: 8, max: 8192 }, undefined, 'Vector dimensions (asked of the API when it supports it).'),
  s('embed.path', 'ENGRAM_EMBED_PATH', { kind: 'path' }, undefined, 'Folder of a local ONNX embedding model (model.onnx + tokenizer.json), for embed.provider=onnx.'),
  s('embed.timeoutMs', 'ENGRAM_EMBED_TIMEOUT_MS', { kind: 'integer', min: 1 }, 30_000, 'Timeout of one embedding call, in milliseconds.'),
  s('context.provider', 'ENGRAM_CONTEXT_PROVIDER', { kind: 'enum', values: ['lcm', 'simple'] }, 'lcm',
    'Working-memory provider: lcm (summary DAG, lossless) or simple (sliding window). Both keep every message.'),
  s('context.budget', 'ENGRAM_CONTEXT_BUDGET', { kind: 'integer', min: 256 }, 16_000, 'Token budget of the assembled conversation.'),
  s('context.freshTail', 'ENGRAM_CONTEXT_FRESH_TAIL', { kind: 'integer', min: 1 }, 20, 'Newest messages always kept verbatim.'),
  s('context.threshold', 'ENGRAM_CONTEXT_THRESHOLD', { kind: 'number', min: 0.1, max: 1 }, 0.75, 'Fraction of the budget that triggers compaction.'),
  s('context.leafChunk', 'ENGRAM_CONTEXT_LEAF_CHUNK', { kind: 'integer', min: 2 }, 10, 'Minimum messages folded into one leaf summary.'),
  s('learning.patternMonitorMode', 'ENGRAM_PATTERN_MONITOR_MODE', { kind: 'enum', values: ['off', 'passive', 'active'] }, 'passive',
    'Pattern monitor (the ACC): off, passive (learn rules at end of turn) or active (also nudge the model mid-turn, once per detector).'),
  s('retrieval.fusion', 'ENGRAM_RETRIEVAL_FUSION', { kind: 'enum', values: ['weighted', 'rrf'] }, 'weighted',
    'How lexical (BM25) and dense scores are fused: weighted = max-normalised weighted sum, rrf = reciprocal rank fusion.'),
  s('retrieval.lexicalWeight', 'ENGRAM_RETRIEVAL_LEXICAL_WEIGHT', { kind: 'number', min: 0 }, 0.7, 'Weight of the lexical (BM25) channel in fusion.'),
  s('retrieval.denseWeight', 'ENGRAM_RETRIEVAL_DENSE_WEIGHT', { kind: 'number', min: 0 }, 0.3, 'Weight of the dense (embedding) channel in fusion.'),
  s('retrieval.recencyWeight', 'ENGRAM_RETRIEVAL_RECENCY_WEIGHT', { kind: 'number', min: 0 }, 0.05, 'Largest boost of a brand-new memory (recency = weight x 0.5^(age_days/half-life)).'),
  s('retrieval.recencyHalfLifeDays', 'ENGRAM_RETRIEVAL_RECENCY_HALF_LIFE_DAYS', { kind: 'number', min: 0.01 }, 30, 'Days after which the recency boost halves.'),
  s('retrieval.frequencyWeight', 'ENGRAM_RETRIEVAL_FREQUENCY_WEIGHT', { kind: 'number', min: 0 }, 0.1, 'Weight of access frequency (weight x log(1 + access count)).'),
  s('retrieval.graph', 'ENGRAM_RETRIEVAL_GRAPH', { kind: 'boolean' }, true, 'Graph diffusion: personalized PageRank over [[links]] and similarity edges among the best candidates.'),
  s('retrieval.graphWeight', 'ENGRAM_RETRIEVAL_GRAPH_WEIGHT', { kind: 'number', min: 0 }, 0.5, 'Weight of the graph-diffusion term.'),
  s('retrieval.candidates', 'ENGRAM_RETRIEVAL_CANDIDATES', { kind: 'integer', min: 1, max: 1000 }, 50, 'Candidates asked of each channel per query (at least 3x the hits wanted).'),
  s('retrieval.dense', 'ENGRAM_RETRIEVAL_DENSE', { kind: 'enum', values: ['auto', 'knn', 'rerank', 'off'] }, 'auto',
    'Dense channel: knn scans every vector, rerank scores the lexical candidates only, auto = knn up to retrieval.denseKnnMaxUnits units, rerank above.'),
  s('retrieval.nearWeight', 'ENGRAM_RETRIEVAL_NEAR_WEIGHT', { kind: 'number', min: 0 }, 0.5, 'Weight of a message\'s neighbours (±1) in its full-text fields.'),
  s('retrieval.farWeight', 'ENGRAM_RETRIEVAL_FAR_WEIGHT', { kind: 'number', min: 0 }, 0.2, 'Weight of a message\'s neighbours two away (±2).'),
  s('retrieval.relatedWeight', 'ENGRAM_RETRIEVAL_RELATED_WEIGHT', { kind: 'number', min: 0 }, 0.3, 'Weight of related words (WordNet hypernyms, and what a named place or group is part of) in the full-text fields.'),
  s('retrieval.speakerBoost', 'ENGRAM_RETRIEVAL_SPEAKER_BOOST', { kind: 'number', min: 0 }, 1, 'When a question names exactly one participant, their messages score x(1 + boost).'),
  s('retrieval.sessionWeight', 'ENGRAM_RETRIEVAL_SESSION_WEIGHT', { kind: 'number', min: 0 }, 0.15, 'Share of the best lexical match in its session a message gets (conversations are remembered as sessions).'),
  s('retrieval.informationWeight', 'ENGRAM_RETRIEVAL_INFORMATION_WEIGHT', { kind: 'number', min: 0 }, 0.2, 'How much what a message says (length, proper names; less for turns that only ask or acknowledge) weighs on its relevance: x max(0, 1 + weight x content); 0 = off.'),
  s('retrieval.agentMessageWeight', 'ENGRAM_RETRIEVAL_AGENT_MESSAGE_WEIGHT', { kind: 'number', min: 0 }, 0.5, 'Factor on the relevance of the agent\'s own messages (role assistant) against what users said: what the user said is the evidence, what the agent answered is its conclusion; 1 = no difference. Not applied when the question asks what the agent said ("the hotel you recommended"; decision 0079).'),
  s('retrieval.restatementSimilarity', 'ENGRAM_RETRIEVAL_RESTATEMENT_SIMILARITY', { kind: 'number', min: 0, max: 1 }, 0.15, 'Facts that change: a later message of the same speaker ranks just above an earlier one when it gives a subject the question names a new value of the same type, or matches every query word the earlier one matches with this content-word cosine or more; 1 = off.'),
  s('retrieval.expansionWeight', 'ENGRAM_RETRIEVAL_EXPANSION_WEIGHT', { kind: 'number', min: 0 }, 0, 'Per-term weight (× cosine) of query expansion through word vectors; 0 = off (0.2 lifts LoCoMo multi-hop All@10 23.0 → 24.5 at about twice the query time, decision 0012).'),
  s('retrieval.wordVectorRerankCandidates', 'ENGRAM_RETRIEVAL_WORD_VECTOR_RERANK_CANDIDATES', { kind: 'integer', min: 1, max: 2000 }, 200, 'Lexical candidates re-ranked by the word-vector (GloVe) embedder.'),
  s('retrieval.denseKnnMaxUnits', 'ENGRAM_RETRIEVAL_DENSE_KNN_MAX_UNITS', { kind: 'integer', min: 1 }, 5_000, 'Largest index (units) on which auto dense retrieval still scans every vector.'),
  s('priming.greetingBudget', 'ENGRAM_PRIMING_GREETING_BUDGET', { kind: 'integer', min: 0 }, 500, 'Tokens of recalled memory primed before a greeting.'),
  s('priming.questionBudget', 'ENGRAM_PRIMING_QUESTION_BUDGET', { kind: 'integer', min: 0 }, 1500, 'Tokens of recalled memory primed before a question.'),
  s('priming.requestBudget', 'ENGRAM_PRIMING_REQUEST_BUDGET', { kind: 'integer', min: 0 }, 3000, 'Tokens of recalled memory primed before a request.'),
  s('priming.heartbeatBudget', 'ENGRAM_PRIMING_HEARTBEAT_BUDGET', { kind: 'integer', min: 0 }, 200, 'Tokens of recalled memory primed before a heartbeat or cron trigger.'),
  s('priming.activityHours', 'ENGRAM_PRIMING_ACTIVITY_HOURS', { kind: 'number', min: 0.1 }, 24, 'How far back the recent-activity channel of priming looks, in hours.'),
  s('limits.messageChars', 'ENGRAM_MAX_MESSAGE_CHARS', { kind: 'integer', min: 1 }, 4_000_000,
    'Longest message stored (a user message, a reply, an appended message), in characters: about a million tokens of prose, the largest context windows. Longer ones are refused with this limit; raise it to store them (the work stays linear: 10 MB is stored and indexed in 1–2 s).'),
  s('limits.toolInputChars', 'ENGRAM_MAX_TOOL_INPUT_CHARS', { kind: 'integer', min: 1 }, 200_000,
    'Longest input of one agent tool call (its arguments as JSON), in characters; each field keeps its own bound too (a query, a memory file of at most 100,000 characters).'),
  s('limits.queryChars', 'ENGRAM_MAX_QUERY_CHARS', { kind: 'integer', min: 1 }, 2_000,
    'Longest search query (search_memory, recall, the memory tool, engram search / recall), in characters; priming recalls from the first and last half of this many characters of a longer message.'),
  s('consolidation.llmCalls', 'ENGRAM_CONSOLIDATION_LLM_CALLS', { kind: 'integer', min: 0 }, 60,
    'Most model calls one consolidation run (daily, weekly) makes; what is left waits for the next run, which says so (engram status).'),
  s('consolidation.llmTokens', 'ENGRAM_CONSOLIDATION_LLM_TOKENS', { kind: 'integer', min: 0 }, 200_000,
    'Most tokens (prompts and answers, as engram counts them) one consolidation run spends on the model.'),
  s('consolidation.backlogDays', 'ENGRAM_CONSOLIDATION_BACKLOG_DAYS', { kind: 'integer', min: 1, max: 365 }, 14,
    'How many days of episodes daily consolidation looks back over for what no model has consolidated yet (offline, or after a failure): older ones are left as episodes.'),
  s('jobs.eager', 'ENGRAM_JOBS_EAGER', { kind: 'boolean' }, true,
    'Run the work queued after a turn or at a session boundary at once, in the background of the process that queued it; false leaves it to the next maintain() (serverless, where nothing may outlive a request).'),
  s('mcp.tools', 'ENGRAM_MCP_TOOLS', { kind: 'enum', values: ['essential', 'all'] }, 'essential',
    'Tools an MCP client sees (engram mcp, /mcp): essential = one per question (search, memorize, read/write a memory file, forget, recall a skill) with short descriptions; all = every agent tool, as mind.tools() gives them.'),
  s('serve.host', 'ENGRAM_SERVE_HOST', { kind: 'string' }, '127.0.0.1',
    'Address `engram serve` listens on. Loopback by default; any other address needs serve.tokens (decision 0038).'),
  s('serve.port', 'ENGRAM_SERVE_PORT', { kind: 'integer', min: 0, max: 65535 }, 7477,
    'Port `engram serve` listens on (0: any free port, printed when it starts).'),
  s('serve.maintain', 'ENGRAM_SERVE_MAINTAIN', { kind: 'string' }, '*/5 * * * *',
    'When `engram serve` looks for due background work (maintain(): idle session boundaries, work left by stopped processes, daily and weekly consolidation, monthly forgetting, memory-file compaction; each runs once per period whatever this says), as a cron pattern: 5 fields, or 6 with seconds first; local time. A run never overlaps the previous one.'),
  s('serve.headersTimeoutMs', 'ENGRAM_SERVE_HEADERS_TIMEOUT_MS', { kind: 'integer', min: 100, max: 86_400_000 }, 10_000,
    'Longest a client of `engram serve` may take to send a request\'s headers, in milliseconds, counted from connecting (or from the first byte of the next request on a kept-alive connection): a slower one gets 408 and its connection is closed. serve.requestTimeoutMs bounds the headers too, when it is shorter (decision 0056).'),
  s('serve.requestTimeoutMs', 'ENGRAM_SERVE_REQUEST_TIMEOUT_MS', { kind: 'integer', min: 100, max: 86_400_000 }, 30_000,
    'Longest a client of `engram serve` may take to send a whole request, headers and body, in milliseconds: a slower one gets 408 and its connection is closed. The answer is not bounded by it (a large export, MCP over HTTP).'),
  s('serve.keepAliveTimeoutMs', 'ENGRAM_SERVE_KEEP_ALIVE_TIMEOUT_MS', { kind: 'integer', min: 100, max: 86_400_000 }, 5_000,
    'How long `engram serve` keeps a connection open for the next request after an answer, in milliseconds (Node adds a second of grace).'),
  s('serve.maxConnectionsPerClient', 'ENGRAM_SERVE_MAX_CONNECTIONS_PER_CLIENT', { kind: 'integer', min: 0 }, 64,
    'Connections one client address may hold open on one `engram serve` process at once (0: no limit; with serve.workers processes, a client may hold this many on each). A connection beyond them is served only if it sends its whole request within 1 second (or serve.headersTimeoutMs if shorter), and closed after its answer; otherwise it gets 429 and is closed. Behind a reverse proxy every client has the proxy\'s address: raise it or set 0 there.'),
  s('serve.maxConnections', 'ENGRAM_SERVE_MAX_CONNECTIONS', { kind: 'integer', min: 0 }, 1024,
    'Connections one `engram serve` process holds open at once from all clients (0: no limit; the server of serve.workers processes holds up to that many times it). When full, a new connection takes the place of the oldest one beyond its client\'s limit still waiting for its request, or else of an idle one of the client holding the most (at least two more than the newcomer\'s); otherwise it gets 503 and is closed.'),
  s('serve.workers', 'ENGRAM_SERVE_WORKERS', { kind: 'integer', min: 0, max: 256 }, 0,
    'Processes `engram serve` answers with, all on one port and one home or database (0: one per core the machine offers, os.availableParallelism(), at most 4 — each process holds its own mind; set more explicitly). With more than one, a first process forks them, starts another when one dies, and stops them all on SIGTERM / SIGINT; MCP over HTTP is answered by the first of them (the others pass /mcp on to it), so its sessions and their bounds are the whole server\'s; serve.requestsInWork, serve.requestsQueued and the connection limits bound each process. Decision 0089.'),
  s('serve.requestsInWork', 'ENGRAM_SERVE_REQUESTS_IN_WORK', { kind: 'integer', min: 0 }, 0,
    'Requests one `engram serve` process answers at once; more wait in arrival order, a turn\'s beginning first (serve.requestsQueued). 0: by the backend — 2 on the embedded home, where a request is CPU on one thread and never waits for a file (one computing, one whose answer is being sent: more at once only makes each wait longer), 4 on PostgreSQL, where a request also waits for the database. GET /v1/health and /v1/status are never held or refused. Decisions 0089, 0096.'),
  s('serve.requestsQueued', 'ENGRAM_SERVE_REQUESTS_QUEUED', { kind: 'integer', min: 0 }, 12,
    'Requests one `engram serve` process keeps waiting beyond serve.requestsInWork; one more is answered at once with 503, Retry-After and what to do (over /mcp a JSON-RPC error), so a busy server says so in milliseconds instead of queueing for seconds. Decision 0089.'),
  s('serve.tokens', 'ENGRAM_SERVE_TOKENS', { kind: 'secret' }, undefined,
    'Bearer tokens of `engram serve`, comma-separated: TOKEN=AGENT:USER acts for that user of the agent, TOKEN=AGENT for the agent alone, TOKEN=admin as an administrator (may name any user); tokens of 16 characters or more. Without any, only loopback is served, as the agent alone (decision 0038).'),
  s('serve.mcpSessionsPerCaller', 'ENGRAM_SERVE_MCP_SESSIONS_PER_CALLER', { kind: 'integer', min: 1 }, 100,
    'MCP sessions over HTTP (`/mcp` of `engram serve`) one caller may hold open — a caller is whom its token acts for (a user, the agent alone, an administrator). A new session beyond it closes that caller\'s own least recently used idle one, never another caller\'s (429 with Retry-After when all of its sessions are answering a call). Decision 0054.'),
  s('serve.mcpSessions', 'ENGRAM_SERVE_MCP_SESSIONS', { kind: 'integer', min: 1 }, 1000,
    'MCP sessions over HTTP `engram serve` holds open in all, a safety bound on its memory: at it, a new session is refused with 503 and Retry-After (no open session is closed to make room) until sessions end (DELETE /mcp, or 30 minutes idle). Decision 0054.'),
  s('log.level', 'ENGRAM_LOG_LEVEL', { kind: 'enum', values: LOG_LEVELS }, 'warn',
    'Lines engram writes to stderr (never stdout): warn = failures of the LLM, the embedder and background work, each with its fix; error, info, debug as usual; silent = none.'),
]

export const SETTINGS_BY_KEY: ReadonlyMap<string, SettingSpec> = new Map(SETTINGS.map((spec) => [spec.key, spec]))
