import type { Command } from '../command.ts'

/**
 * A command as the registry knows it: the words that select it and its one-line summary, as data,
 * and its module, imported only when it runs (or shows its own --help). `engram status` loads
 * status and what it needs, not the MCP SDK, the HTTP server or the evaluation harness (decision 0041).
 */
export interface CommandEntry {
  /** Words that select it: `['status']`, `['context', 'append']`. */
  path: string[]
  summary: string
  load(): Promise<Command>
}

/** Every command, in the order `engram --help` lists them. Adding one here is a decision: it becomes public interface. */
export const COMMANDS: readonly CommandEntry[] = [
  { path: ['init'], summary: 'Create (or check) an engram home and the agent\'s folders', load: () => import('./init/index.ts').then((m) => m.initCommand) },
  { path: ['status'], summary: 'Count every kind of memory and show what this mind can do', load: () => import('./status/index.ts').then((m) => m.statusCommand) },
  { path: ['config'], summary: 'Show every setting, its value and where it came from (default, file, env, flag)', load: () => import('./config/index.ts').then((m) => m.configCommand) },
  { path: ['doctor'], summary: 'Check the storage (SQLite or PostgreSQL and pgvector), vector search, the lossless context, the LLM and the embedder, and recent model failures, each with the fix', load: () => import('./doctor/index.ts').then((m) => m.doctorCommand) },
  { path: ['reindex'], summary: 'Re-read every memory file (hand edits included) and bring the search index up to date', load: () => import('./reindex/index.ts').then((m) => m.reindexCommand) },
  { path: ['maintain'], summary: 'Run the work that is due, whichever process queued it: session boundaries (episodes, state, resolutions, sleep replay), work left by turns, memory-file compaction, reindex', load: () => import('./maintain/index.ts').then((m) => m.maintainCommand) },
  { path: ['consolidate'], summary: 'Consolidate now: daily = frontmatter migration, what the episodes teach (with a model) and low-activity marks; weekly = duplicate merge, episode compression, pattern distillation, contradiction scan; monthly = active forgetting (low-activity knowledge and procedures to archive/forgotten/, restorable); --dry-run shows what it would do', load: () => import('./consolidate/index.ts').then((m) => m.consolidateCommand) },
  { path: ['remember'], summary: 'Save a memory through the encoding gate (rules, lessons, profile facts)', load: () => import('./remember/index.ts').then((m) => m.rememberCommand) },
  { path: ['memory', 'context'], summary: 'Print the memory context an agent gets in its system prompt (labelled sections within budgets); --user for that user\'s sessions', load: () => import('./memory/index.ts').then((m) => m.memoryContextCommand) },
  { path: ['confirm'], summary: 'List memories waiting for confirmation (copilot mode), or accept / reject them', load: () => import('./confirm/index.ts').then((m) => m.confirmCommand) },
  { path: ['import'], summary: 'Import an engram export, an Anton or an AnimaWorks memory folder (the source is only read; re-import skips duplicates)', load: () => import('./import/index.ts').then((m) => m.importCommand) },
  { path: ['recall'], summary: 'Search episodic memory (episode summaries and the activity log), ranked, with sources', load: () => import('./recall/index.ts').then((m) => m.recallCommand) },
  { path: ['search'], summary: 'Search every kind of memory (hybrid: words and meaning, fused, with recency and frequency), with sources', load: () => import('./search/index.ts').then((m) => m.searchCommand) },
  { path: ['forget'], summary: 'Forget a memory (moved to archive/forgotten/, restorable); --purge deletes it for real; --user ID --purge erases a user', load: () => import('./forget/index.ts').then((m) => m.forgetCommand) },
  { path: ['restore'], summary: 'Bring a forgotten memory back from archive/forgotten/ into memory and the index', load: () => import('./restore/index.ts').then((m) => m.restoreCommand) },
  { path: ['history'], summary: 'How a knowledge or procedure document changed and why: its state, lineage, the facts it superseded or was superseded by, and earlier versions with their reasons', load: () => import('./history/index.ts').then((m) => m.historyCommand) },
  { path: ['memories', 'add'], summary: 'Add memories through the encoding gate, for --user ID or the agent; prints what was added, left unchanged or held for confirmation, with ids', load: () => import('./memories/index.ts').then((m) => m.memoriesAddCommand) },
  { path: ['memories', 'search'], summary: "Search the memories --user ID sees (their own, the agent's, shared), best first, with ids and scores", load: () => import('./memories/index.ts').then((m) => m.memoriesSearchCommand) },
  { path: ['memories', 'list'], summary: 'List the memories --user ID sees, a page at a time (--kind, --limit, --offset), with ids', load: () => import('./memories/index.ts').then((m) => m.memoriesListCommand) },
  { path: ['memories', 'get'], summary: "Print one memory by id (another user's is not found)", load: () => import('./memories/index.ts').then((m) => m.memoriesGetCommand) },
  { path: ['memories', 'update'], summary: "Replace a memory's text by id: written through the gate, the old text forgotten (restorable)", load: () => import('./memories/index.ts').then((m) => m.memoriesUpdateCommand) },
  { path: ['memories', 'delete'], summary: 'Forget a memory by id (archived, restorable with engram restore); --purge deletes it for real', load: () => import('./memories/index.ts').then((m) => m.memoriesDeleteCommand) },
  { path: ['memories', 'history'], summary: 'How a memory changed, by id (knowledge and procedure documents keep versions)', load: () => import('./memories/index.ts').then((m) => m.memoriesHistoryCommand) },
  { path: ['export'], summary: "Write the agent's whole memory as the seeds' file tree into a folder; with --user, everything one user owns (profile, memories, conversations, turns, resolutions)", load: () => import('./export/index.ts').then((m) => m.exportCommand) },
  { path: ['migrate'], summary: 'Copy every agent of this home into PostgreSQL (postgres://…) or another home, then check the copy (incomplete: exit 6, run again to resume): memory with its archives, earlier versions, forgotten memories and access counts, conversations, activity, confirmations, turns, job runs, waiting jobs — not session records, counters or ended jobs', load: () => import('./migrate/index.ts').then((m) => m.migrateCommand) },
  { path: ['mcp'], summary: 'Serve this agent\'s memory over MCP on stdio: tools, memory files as resources, a primed_context prompt', load: () => import('./mcp/index.ts').then((m) => m.mcpCommand) },
  { path: ['serve'], summary: 'Serve this agent\'s memory over HTTP (begin/end turns, memorize, search, status), loopback by default; runs the due background work on serve.maintain', load: () => import('./serve/index.ts').then((m) => m.serveCommand) },
  { path: ['eval', 'retrieval'], summary: 'Measure recall on a retrieval-eval/1 file (e.g. LoCoMo) through the real recall path, beside plain BM25', load: () => import('./eval/index.ts').then((m) => m.evalCommand) },
  { path: ['skills'], summary: 'List saved skills (same as `engram skills list`)', load: () => import('./skills/index.ts').then((m) => m.skillsCommand) },
  { path: ['skills', 'list'], summary: 'List saved skills (procedural memory) with their usage counters', load: () => import('./skills/index.ts').then((m) => m.skillsListCommand) },
  { path: ['skills', 'show'], summary: 'Print one skill: its procedure, cue and counters (typos resolve to the closest label)', load: () => import('./skills/index.ts').then((m) => m.skillsShowCommand) },
  { path: ['skills', 'remove'], summary: 'Remove a skill: its folder moves to archive/skills/ (exact label only)', load: () => import('./skills/index.ts').then((m) => m.skillsRemoveCommand) },
  { path: ['skills', 'save'], summary: 'Save a skill: drafted by the LLM from recent activity, or from a markdown file (--from, offline)', load: () => import('./skills/index.ts').then((m) => m.skillsSaveCommand) },
  { path: ['context', 'append'], summary: 'Append messages to a conversation (never lost, never rewritten)', load: () => import('./context/append.ts').then((m) => m.contextAppendCommand) },
  { path: ['context', 'assemble'], summary: 'Assemble a conversation within a token budget (fresh tail + newest older items that fit)', load: () => import('./context/assemble.ts').then((m) => m.contextAssembleCommand) },
  { path: ['context', 'compact'], summary: 'Compact a conversation: one leaf + one condensed pass, or --full until nothing changes', load: () => import('./context/compact.ts').then((m) => m.contextCompactCommand) },
  { path: ['context', 'search'], summary: "Search the conversations of --user and the agent's own (messages and summaries)", load: () => import('./context/search.ts').then((m) => m.contextSearchCommand) },
  { path: ['context', 'describe'], summary: 'Show a summary’s (or message’s) metadata and lineage', load: () => import('./context/describe.ts').then((m) => m.contextDescribeCommand) },
  { path: ['context', 'expand'], summary: 'Open a summary into what it folds (--messages: down to the raw messages)', load: () => import('./context/describe.ts').then((m) => m.contextExpandCommand) },
  { path: ['context', 'stats'], summary: 'Show a conversation’s message and token counts and its summaries, and check that it is lossless', load: () => import('./context/stats.ts').then((m) => m.contextStatsCommand) },
]
