/**
 * An episode file as a person reads it: each section under its heading, its text rendered, the
 * marker comment (machine data) left out — and an extractive section's notice ("_Extractive
 * summary (no LLM summary: …)_", which the file repeats on every section it concerns) said once
 * above them all, with how many sections it concerns (issue 30: degraded output flagged once). The
 * file as stored stays one toggle away on the file page.
 */
import { html } from 'hono/html'
import { parseEpisodeSections, recalledSection } from '../../../memory/episodes/episode-format.ts'
import type { Html } from './layout.ts'
import { markdown } from './markdown.ts'
import { plural } from './words.ts'

/** The body of an episode file: one notice per reason its sections are degraded, then each section. */
export function episodeBody(body: string): Html {
  const sections = parseEpisodeSections(body).map((section) => recalledSection(section))
  const reasons = new Map<string, number>()
  for (const section of sections) if (section.degraded !== undefined) reasons.set(section.degraded, (reasons.get(section.degraded) ?? 0) + 1)
  const headed = sections.filter((section) => section.heading !== '' || section.body !== '')
  return html`${[...reasons].map(
    ([reason, n]) =>
      html`<p class="warn" data-testid="degraded-notice">${n === headed.length ? (n === 1 ? 'This section is' : n === 2 ? 'Both sections are' : `All ${n} sections are`) : `${plural(n, 'section is', 'sections are')}`} an ${reason}: the conversation's own lines, not a summary a model wrote.</p>`,
  )}<div data-testid="file-body">${headed.map(
    (section) => html`<section class="episode-section" data-testid="episode-section">${section.heading !== '' ? html`<h4>${section.heading}</h4>` : ''}${markdown(section.body)}</section>`,
  )}</div>`
}
