/**
 * Pictures for the dashboard, drawn on the server as inline SVG (no chart library, no script):
 * a line chart of series over time and a bar chart. Every chart has a title, labelled axes and its
 * numbers in a `<details>` table beneath it, for a screen reader and for anyone who would rather
 * read. Labels are interpolated through `hono/html`, so memory text in them is escaped.
 */
import { html } from 'hono/html'
import type { Html } from './layout.ts'

/** Series colours, distinguishable in light and dark themes. */
const PALETTE = ['#3451b2', '#d9480f', '#2b8a3e', '#ae3ec9', '#0c8599', '#e67700', '#c2255c', '#5c940d']

const WIDTH = 640
const HEIGHT = 240
const MARGIN = { top: 14, right: 16, bottom: 42, left: 56 }

export interface Series {
  name: string
  /** x: an instant in milliseconds; y: the value. Sorted by x. */
  points: Array<{ x: number; y: number }>
}

export interface LineChartOptions {
  testid: string
  title: string
  xLabel: string
  yLabel: string
  series: Series[]
  /** How an x value is written on the axis and in the table. */
  formatX: (x: number) => string
  formatY?: (y: number) => string
  /** Draw each point as a dot only (a scatter of separate measurements), not joined. */
  dots?: boolean
  /** Said under the title (what the numbers are, how many were left out). */
  caption?: string
}

function niceMax(value: number): number {
  if (value <= 0) return 1
  const magnitude = 10 ** Math.floor(Math.log10(value))
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude
  return 10 * magnitude
}

function plain(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1)
}

/** A line (or dot) chart of `series` over time, with its table. An empty chart says there is nothing yet. */
export function lineChart(options: LineChartOptions): Html {
  const { testid, title, xLabel, yLabel, series, formatX } = options
  const formatY = options.formatY ?? plain
  const all = series.flatMap((line) => line.points)
  if (all.length === 0) return html`<figure class="chart" data-testid="${testid}"><figcaption><b>${title}</b></figcaption><p class="muted" data-testid="${testid}-empty">Nothing recorded yet.</p></figure>`
  const xs = all.map((point) => point.x)
  const minX = Math.min(...xs)
  const maxX = Math.max(...xs)
  // Counts get whole-number ticks (0, 1, 2, 3, 4 at the least), not 0.25 of a memory.
  const whole = all.every((point) => Number.isInteger(point.y))
  const maxY = whole ? Math.max(4, niceMax(Math.max(...all.map((point) => point.y)))) : niceMax(Math.max(...all.map((point) => point.y)))
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom
  const px = (x: number): number => MARGIN.left + (maxX === minX ? plotW / 2 : ((x - minX) / (maxX - minX)) * plotW)
  const py = (y: number): number => MARGIN.top + plotH - (y / maxY) * plotH
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * maxY)
  const xTicks = maxX === minX ? [minX] : [0, 1 / 3, 2 / 3, 1].map((f) => minX + f * (maxX - minX))
  // One table row per measurement: two turns that began in the same millisecond are two rows.
  const rows = tableRows(series)
  return html`<figure class="chart" data-testid="${testid}">
<figcaption><b>${title}</b>${options.caption ? html` <span class="muted">${options.caption}</span>` : ''}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" role="img" aria-label="${title}" style="max-width:${WIDTH}px">
<g>${yTicks.map((tick) => html`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${py(tick)}" y2="${py(tick)}" stroke="currentColor" stroke-opacity="0.12"></line><text x="${MARGIN.left - 6}" y="${py(tick) + 4}" text-anchor="end">${formatY(tick)}</text>`)}</g>
<g>${xTicks.map((tick) => html`<text x="${px(tick)}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="middle">${formatX(tick)}</text>`)}</g>
<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="currentColor" stroke-opacity="0.4"></line>
<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="currentColor" stroke-opacity="0.4"></line>
<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle" data-testid="${testid}-x-label">${xLabel}</text>
<text x="14" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 14 ${MARGIN.top + plotH / 2})" data-testid="${testid}-y-label">${yLabel}</text>
${series.map((line, i) => {
  const colour = PALETTE[i % PALETTE.length] ?? '#3451b2'
  const points = line.points.map((point) => `${px(point.x).toFixed(1)},${py(point.y).toFixed(1)}`).join(' ')
  return html`<g data-series="${line.name}">${options.dots || line.points.length === 1 ? '' : html`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points}"></polyline>`}${line.points.map((point) => html`<circle cx="${px(point.x).toFixed(1)}" cy="${py(point.y).toFixed(1)}" r="${options.dots ? 2.5 : 3}" fill="${colour}"><title>${line.name}: ${formatY(point.y)} (${formatX(point.x)})</title></circle>`)}</g>`
})}
</svg>
<div class="legend">${series.map((line, i) => html`<span class="pill"><span style="color:${PALETTE[i % PALETTE.length] ?? '#3451b2'}">■</span> ${line.name}</span> `)}</div>
<details data-testid="${testid}-table"><summary>The numbers</summary><table><thead><tr><th>${xLabel}</th>${series.map((line) => html`<th>${line.name}</th>`)}</tr></thead><tbody>${rows.map(
    (row) => html`<tr><td>${formatX(row.x)}</td>${row.values.map((value) => html`<td>${value === undefined ? '' : formatY(value)}</td>`)}</tr>`,
  )}</tbody></table></details>
</figure>`
}

/** The table of a line chart: by x, the n-th point at that x of each series on the n-th row. */
function tableRows(series: readonly Series[]): Array<{ x: number; values: Array<number | undefined> }> {
  const rows = new Map<string, { x: number; values: Array<number | undefined> }>()
  series.forEach((line, i) => {
    const seen = new Map<number, number>()
    for (const point of line.points) {
      const n = seen.get(point.x) ?? 0
      seen.set(point.x, n + 1)
      const key = `${point.x}#${n}`
      const row = rows.get(key) ?? { x: point.x, values: series.map(() => undefined) }
      row.values[i] = point.y
      rows.set(key, row)
    }
  })
  return [...rows.values()].sort((a, b) => a.x - b.x)
}

export interface BarChartOptions {
  testid: string
  title: string
  /** What the bars are (the label axis). */
  categoryLabel: string
  /** What their length measures. */
  valueLabel: string
  bars: Array<{ label: string; value: number; detail?: string }>
  caption?: string
}

/** Horizontal bars, longest first as given, with their table. */
export function barChart(options: BarChartOptions): Html {
  const { testid, title, categoryLabel, valueLabel, bars } = options
  if (bars.length === 0) return html`<figure class="chart" data-testid="${testid}"><figcaption><b>${title}</b></figcaption><p class="muted" data-testid="${testid}-empty">Nothing recorded yet.</p></figure>`
  const row = 22
  const labelW = 240
  const plotW = WIDTH - labelW - MARGIN.right - 40
  const height = MARGIN.top + bars.length * row + 34
  const max = niceMax(Math.max(...bars.map((bar) => bar.value)))
  const short = (label: string): string => (label.length > 38 ? `${label.slice(0, 37)}…` : label)
  return html`<figure class="chart" data-testid="${testid}">
<figcaption><b>${title}</b>${options.caption ? html` <span class="muted">${options.caption}</span>` : ''}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="${title}" style="max-width:${WIDTH}px">
<text x="${labelW - 6}" y="${MARGIN.top - 2}" text-anchor="end" data-testid="${testid}-y-label">${categoryLabel}</text>
${bars.map((bar, i) => {
  const y = MARGIN.top + 4 + i * row
  const w = Math.max(1, (bar.value / max) * plotW)
  return html`<g><text x="${labelW - 6}" y="${y + 14}" text-anchor="end">${short(bar.label)}<title>${bar.label}</title></text><rect x="${labelW}" y="${y + 2}" width="${w.toFixed(1)}" height="${row - 6}" fill="${PALETTE[0]}" rx="2"><title>${bar.label}: ${plain(bar.value)}</title></rect><text x="${labelW + w + 4}" y="${y + 14}">${plain(bar.value)}</text></g>`
})}
<text x="${labelW + plotW / 2}" y="${height - 6}" text-anchor="middle" data-testid="${testid}-x-label">${valueLabel}</text>
</svg>
<details data-testid="${testid}-table"><summary>The numbers</summary><table><thead><tr><th>${categoryLabel}</th><th>${valueLabel}</th><th></th></tr></thead><tbody>${bars.map(
    (bar) => html`<tr><td class="text">${bar.label}</td><td>${plain(bar.value)}</td><td class="text muted">${bar.detail ?? ''}</td></tr>`,
  )}</tbody></table></details>
</figure>`
}

/** A day (`YYYY-MM-DD`) of an instant in milliseconds, for axes. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/** The `q` quantile (0–1) of `values` (nearest rank), or undefined for none. */
export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}
