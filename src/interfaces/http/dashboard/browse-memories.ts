/**
 * `/memories`: every kind of memory the viewer may see, listed from the search index (or searched
 * as `engram search` does: hybrid, no access recorded), filterable by user, kind and scope; and
 * `/memories/file`: one memory file — its frontmatter, its entries, its history (saved versions,
 * superseded facts) — read through `read_memory_file`'s confinement.
 */
import type { Hono } from 'hono'
import { html } from 'hono/html'
import { ENGRAM_SCOPES, type EngramScope } from '../../../core/engram.ts'
import { EngramError, ErrorCode } from '../../../core/errors.ts'
import { parseFrontmatter } from '../../../core/frontmatter.ts'
import { type MemoryFileKind, parseMemoryFile } from '../../../core/markdown-entry.ts'
import { canSee } from '../../../core/owner.ts'
import type { DocumentHistory, FactLink } from '../../../memory/consolidation/history.ts'
import { validityInterval } from '../../../memory/retrieval/fact-history.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import { type StoredUnit, UNIT_KINDS, type UnitKind } from '../../../storage/contracts.ts'
import { readMemoryText } from '../../../tools/memory-files.ts'
import { locateMemoryPath, memoryPathOfSource } from '../../../memory/tree/memory-paths.ts'
import { hitReference } from '../../../tools/search-memory-tool.ts'
import type { ServeEnv } from '../support.ts'
import { guarded, memoryPath, userPageLink, userPicker, userQuery, valueText, type Viewing, viewingOf, when } from './browse-support.ts'
import { episodeBody } from './episode-view.ts'
import { type Html, page } from './layout.ts'
import { cutKeepingLines, markdown } from './markdown.ts'
import { plural, reasonWithTerms } from './words.ts'

/** Rows of a listing at most (a search returns fewer); the page says when there are more. */
export const MEMORY_ROWS = 300
/** Hits of a search. */
const SEARCH_HITS = 50

interface MemoryRow {
  unit: StoredUnit
  /** Where to open it: a memory path, or a conversation. */
  ref: string
  /** A search hit's score and its terms, said in words on the page. */
  why?: Record<string, number>
}

function kindOf(value: string | undefined): UnitKind | undefined {
  if (value === undefined || value === '') return undefined
  if (!(UNIT_KINDS as readonly string[]).includes(value)) {
    throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `"${value}" is not a kind of memory.`, fix: `pick one of ${UNIT_KINDS.join(', ')}, or all kinds` })
  }
  return value as UnitKind
}

function scopeOf(value: string | undefined): EngramScope | undefined {
  if (value === undefined || value === '') return undefined
  if (!(ENGRAM_SCOPES as readonly string[]).includes(value)) {
    throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `"${value}" is not a scope.`, fix: `pick ${ENGRAM_SCOPES.join(' or ')}, or every scope` })
  }
  return value as EngramScope
}

/** Kinds of the memory files' units (conversations' messages and summaries have their own page). */
const FILE_KINDS = UNIT_KINDS.filter((kind) => kind !== 'message' && kind !== 'summary')

/**
 * The first MEMORY_ROWS units of the memory files the viewer may see, by file: read from the index
 * a page at a time with the viewer's filter applied there, so a large memory costs a page, not a
 * pass over every file.
 */
async function listUnits(mind: MindInternals, viewing: Viewing, kind: UnitKind | undefined, scope: EngramScope | undefined): Promise<{ rows: MemoryRow[]; more: boolean }> {
  const rows: MemoryRow[] = []
  if (kind === 'message' || kind === 'summary') return { rows, more: false }
  const filter = { viewer: viewing.viewer, kinds: kind !== undefined ? [kind] : FILE_KINDS, ...(scope !== undefined ? { scope } : {}) }
  for (let offset = 0; ; offset += MEMORY_ROWS + 1) {
    const page = await mind.backend.index.list(filter, { limit: MEMORY_ROWS + 1, offset })
    for (const unit of page) {
      // Another user's file has no path in this viewer's namespace: it is never shown.
      if (!canSee(viewing.viewer, unit) || memoryPathOfSource(unit.source, mind.layout, viewing.viewer) === undefined) continue
      if (rows.length >= MEMORY_ROWS) return { rows, more: true }
      rows.push({ unit, ref: hitReference(unit, mind.layout, viewing.viewer) })
    }
    if (page.length <= MEMORY_ROWS) return { rows, more: false }
  }
}

async function searchUnits(mind: MindInternals, viewing: Viewing, query: string, kind: UnitKind | undefined, scope: EngramScope | undefined): Promise<MemoryRow[]> {
  // A person looking is not the agent recalling: access statistics are left alone (as `engram search`).
  const result = await mind.retriever.search(query, { limit: SEARCH_HITS, viewer: viewing.viewer, recordAccess: false, ...(kind ? { kinds: [kind] } : {}), ...(scope ? { scope } : {}) })
  return result.hits.map((hit) => ({ unit: hit.unit, ref: hitReference(hit.unit, mind.layout, viewing.viewer), why: { score: hit.score, ...hit.terms } }))
}

/** The link of a memory's source: its file page, or its conversation. */
function sourceLink(ref: string, viewing: Viewing): Html {
  const conversation = /^conv:(\d+)/.exec(ref)
  if (conversation) return html`<a href="/conversations/${conversation[1]}${userQuery(viewing).replace('&', '?')}">conversation ${conversation[1]}</a>`
  const file = ref.split('#')[0] ?? ref
  return html`<a href="/memories/file?path=${encodeURIComponent(file)}${userQuery(viewing)}" data-testid="file-link">${ref}</a>`
}

function ownerLabel(unit: StoredUnit): string {
  return unit.owner === 'agent' ? 'agent' : unit.owner === 'shared' ? 'shared' : unit.owner.slice(5)
}

/** The owner of a memory; a user's name links to their page when this viewing may open it. */
function ownerCell(unit: StoredUnit, viewing: Viewing): Html | string {
  const label = ownerLabel(unit)
  return unit.owner.startsWith('user:') && (viewing.principal.admin || viewing.principal.user === label) ? html`<a href="${userPageLink(label)}">${label}</a>` : label
}

function memoriesTable(rows: MemoryRow[], viewing: Viewing, searching: boolean): Html {
  return html`<table data-testid="memory-table">
<thead><tr><th scope="col">kind</th><th scope="col">scope</th><th scope="col">owner</th><th scope="col">text</th><th scope="col">file</th><th scope="col">${searching ? 'why it was found' : 'date'}</th></tr></thead>
<tbody>${rows.map(
    (row) => html`<tr data-testid="memory-row" data-kind="${row.unit.kind}" data-owner="${row.unit.owner}">
<td><span class="pill">${row.unit.kind}</span></td><td>${row.unit.scope ?? ''}</td><td>${ownerCell(row.unit, viewing)}</td>
<td class="text" data-testid="memory-text">${markdown(cutKeepingLines(row.unit.text, 400))}</td><td>${sourceLink(row.ref, viewing)}</td>
<td class="muted">${row.why !== undefined ? reasonWithTerms(row.why, 'the search') : html`<span class="nowrap">${when(row.unit.createdAt).slice(0, 10)}</span>`}</td></tr>`,
  )}</tbody></table>`
}

/** The engram file kind of a memory path (rules, lessons, profile, a topic), or undefined for documents. */
function memoryFileKind(local: string): MemoryFileKind | undefined {
  const inner = local.replace(/^(memory|project)\//, '')
  if (inner === local && !local.startsWith('memory/') && !local.startsWith('project/')) return undefined
  if (inner === 'rules.md') return 'rules'
  if (inner === 'lessons.md') return 'lessons'
  if (inner === 'profile.md') return 'profile'
  if (/^topics\/[^/]+\.md$/.test(inner)) return 'topic'
  return undefined
}

function fileLink(path: string, viewing: Viewing, label?: string): Html {
  return html`<a href="/memories/file?path=${encodeURIComponent(path)}${userQuery(viewing)}">${label ?? path}</a>`
}

function chainRow(mind: MindInternals, viewing: Viewing, link: FactLink, relation: string): Html {
  const path = memoryPath(mind, viewing, link.path)
  return html`<tr data-testid="fact-link"><td>${relation}</td><td>${path ? fileLink(path, viewing) : link.path}</td><td>${link.state}</td><td>${validityInterval(link.validFrom, link.validUntil)}</td></tr>`
}

function historySection(mind: MindInternals, viewing: Viewing, history: DocumentHistory): Html {
  const lineage = Object.entries(history.lineage)
  const chain = [...[...(history.supersedes ?? [])].reverse().map((link) => chainRow(mind, viewing, link, 'superseded by this')), ...(history.supersededBy ?? []).map((link) => chainRow(mind, viewing, link, 'supersedes this'))]
  return html`<section data-testid="history">
<h3>History</h3>
<p>State: <b data-testid="history-state">${history.state}</b>${history.validity ? html` · valid ${validityInterval(history.validity.from, history.validity.until)}` : ''}</p>
${lineage.length > 0 ? html`<table><tbody>${lineage.map(([key, value]) => html`<tr><th>${key}</th><td>${valueText(value)}</td></tr>`)}</tbody></table>` : ''}
${
  chain.length > 0
    ? html`<h4>Facts it replaced or that replaced it</h4><p class="muted">When a newer fact supersedes an older one, the old one stays findable as history, below its successor.</p>
<table><thead><tr><th>relation</th><th>document</th><th>state</th><th>valid</th></tr></thead><tbody>${chain}</tbody></table>`
    : ''
}
<h4>Saved versions</h4>
${
  history.versions.length === 0
    ? html`<p class="muted" data-testid="no-versions">No earlier versions: every rewrite saves the old text under archive/versions/ first, so one will appear here after the first change.</p>`
    : html`<table><thead><tr><th>saved</th><th>version</th><th>why it changed</th></tr></thead><tbody>${history.versions.map((version) => {
        const path = memoryPath(mind, viewing, version.path)
        return html`<tr data-testid="version"><td>${when(version.at)}</td><td>${path ? fileLink(path, viewing) : version.path}</td><td>${version.reason ?? ''}</td></tr>`
      })}</tbody></table>`
}
${history.retired ? html`<p class="muted">And ${plural(history.retired.length, 'older version', 'older versions')} that version retention moved to archive/forgotten/versions/.</p>` : ''}
</section>`
}

export function registerMemoryPages(app: Hono<ServeEnv>, mind: MindInternals): void {
  app.get(
    '/memories',
    guarded(mind, '/memories', async (c) => {
      const viewing = viewingOf(c, mind)
      const query = (c.req.query('q') ?? '').trim()
      const kind = kindOf(c.req.query('kind'))
      const scope = scopeOf(c.req.query('scope'))
      const searching = query !== ''
      const listed = searching ? { rows: await searchUnits(mind, viewing, query, kind, scope), more: false } : await listUnits(mind, viewing, kind, scope)
      const form = html`<form method="get" action="/memories" data-testid="memory-filter">
<input type="search" name="q" value="${query}" placeholder="search words (empty: list everything)" size="32" aria-label="Search words (empty: list everything)">
${await userPicker(mind, viewing)}
<label>kind <select name="kind"><option value="">all kinds</option>${UNIT_KINDS.map((name) => html`<option value="${name}"${name === kind ? html` selected` : ''}>${name}</option>`)}</select></label>
<label>scope <select name="scope"><option value="">every scope</option>${ENGRAM_SCOPES.map((name) => html`<option value="${name}"${name === scope ? html` selected` : ''}>${name}</option>`)}</select></label>
<button type="submit">${searching ? 'Search' : 'Show'}</button>
</form>`
      const intro = html`<p class="muted">Everything the agent remembers that this view may see: rules, lessons, profile facts, topics, knowledge, procedures, skills, episodes, activity and user profiles. ${
        searching ? 'Results are ranked as the agent\'s own search ranks them (words and meaning, recency, frequency); looking here does not count as the agent recalling them.' : 'Type words to search instead of listing. Conversations have their own page.'
      } Open a file to see its entries and how it changed.</p>`
      const results =
        listed.rows.length === 0
          ? html`<p data-testid="empty">${
              searching
                ? `Nothing matches "${query}" in this view. Try other or fewer words, or another kind.`
                : html`No memories here yet. They appear when an agent memorizes something (<code>POST /v1/memorize</code>, the memorize tool, <code>engram remember</code>), writes a memory file, or when conversations are consolidated into episodes.`
            }</p>`
          : html`<p class="muted" data-testid="count">${listed.more ? `${listed.rows.length}+ (the first ${MEMORY_ROWS}; narrow by kind or search) ${searching ? 'results' : 'memories'}` : plural(listed.rows.length, searching ? 'result' : 'memory', searching ? 'results' : 'memories')}</p>${memoriesTable(listed.rows, viewing, searching)}`
      return c.html(page({ title: 'Memories', agent: mind.agent, principal: viewing.principal, active: '/memories', body: html`${intro}${form}${results}` }))
    }),
  )

  app.get(
    '/memories/file',
    guarded(mind, '/memories', async (c) => {
      const viewing = viewingOf(c, mind)
      const requested = c.req.query('path') ?? ''
      if (requested.trim() === '') {
        throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'Which memory file? The address names none.', fix: 'open a file from the Memories page, or add ?path=knowledge/<name>.md' })
      }
      // read_memory_file's confinement: outside the memory is refused, another user's memory is access_denied.
      const { path, text } = await readMemoryText(requested, mind.layout, viewing.viewer, mind.backend)
      const location = locateMemoryPath(path, mind.layout, viewing.viewer)
      const kind = memoryFileKind(location.local)
      const owner = location.owner === 'agent' ? 'the agent' : location.owner === 'shared' ? 'shared memory' : `user ${location.owner.slice(5)}`
      let content: Html
      if (kind !== undefined) {
        const parsed = parseMemoryFile(text, kind)
        const entries = parsed.lines.flatMap((line) => (line.type === 'entry' ? [line] : []))
        const unreadable = parsed.lines.flatMap((line, i) => (line.type === 'unreadable' ? [{ line: i + 1, raw: line.raw, reason: line.reason }] : []))
        content = html`<h3>Entries</h3>
${
  entries.length === 0
    ? html`<p class="muted" data-testid="empty">No entries in this file.</p>`
    : html`<table data-testid="entries"><thead><tr><th>kind</th><th>text</th><th>details</th></tr></thead><tbody>${entries.map(
        (line) =>
          html`<tr data-testid="entry"><td><span class="pill">${line.entry.kind}</span></td><td class="text">${line.entry.text}</td><td class="muted">${Object.entries(line.entry.meta ?? {})
            .map(([key, value]) => `${key}: ${value}`)
            .join(' · ')}</td></tr>`,
      )}</tbody></table>`
}
${unreadable.length > 0 ? html`<h3>Lines engram could not read (kept as they are)</h3><table>${unreadable.map((line) => html`<tr><td>line ${line.line}</td><td class="text">${line.raw}</td><td class="warn">${line.reason}</td></tr>`)}</table>` : ''}`
      } else if (path.endsWith('.md')) {
        const parsed = parseFrontmatter(text)
        const fields = Object.entries(parsed.frontmatter)
        const episode = /^episodes\//.test(location.local)
        content = html`${
          fields.length > 0
            ? html`<h3>Frontmatter</h3><table data-testid="frontmatter"><tbody>${fields.map(([key, value]) => html`<tr data-testid="frontmatter-field"><th>${key}</th><td class="text">${valueText(value)}</td></tr>`)}</tbody></table>`
            : ''
        }${parsed.problem ? html`<p class="warn">Line ${parsed.problem.line}: ${parsed.problem.reason}</p>` : ''}
<h3>Text</h3>${episode ? episodeBody(parsed.body) : html`<div data-testid="file-body">${markdown(parsed.body)}</div>`}
<details><summary>The file as stored</summary><pre data-testid="file-source">${text}</pre></details>`
      } else {
        content = html`<pre data-testid="file-body">${text}</pre>`
      }
      let history: Html = html``
      if (/^(knowledge|procedures)\//.test(location.local)) {
        try {
          history = historySection(mind, viewing, await mind.history(path, viewing.user !== undefined ? { user: viewing.user } : {}))
        } catch (error) {
          if (!EngramError.is(error)) throw error
          history = html`<p class="muted">No history: ${error.message}</p>`
        }
      } else if (kind !== undefined && kind !== 'topic') {
        const forgotten = `${location.tree}archive/forgotten/${location.local.replace(/^memory\//, '')}`
        const archived = await readMemoryText(forgotten, mind.layout, viewing.viewer, mind.backend).then(
          () => true,
          () => false,
        )
        history = html`<section data-testid="history"><h3>History</h3><p class="muted">Entries forgotten from this file are kept in ${archived ? fileLink(forgotten, viewing) : forgotten}${archived ? '' : ' (none yet)'}; <code>engram restore</code> brings one back.</p></section>`
      }
      const body = html`<p class="muted">Owned by <b data-testid="file-owner">${owner}</b>. <a href="/memories${userQuery(viewing).replace('&', '?')}">back to memories</a></p>
<h3 data-testid="file-path">${path}</h3>${content}${history}`
      return c.html(page({ title: 'Memory file', agent: mind.agent, principal: viewing.principal, active: '/memories', body }))
    }),
  )
}
