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
// Left: room for a tick such as "1500 ms" beside the rotated axis title, without the two touching.
const MARGIN = { top: 14, right: 16, bottom: 42, left: 72 }

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
  /** How an x value is written on the axis. */
  formatX: (x: number) => string
  /** How an x value is written in the table and a point's tooltip (default: formatX). */
  describeX?: (x: number) => string
  /** The x values to label on the axis (default: four spread over the range, without repeats). */
  xTicks?: number[]
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
  const describeX = options.describeX ?? formatX
  // Labels that would read the same are written once; the first and last are anchored inside the picture.
  const xTicks = distinctLabels(options.xTicks ?? (maxX === minX ? [minX] : [0, 1 / 3, 2 / 3, 1].map((f) => minX + f * (maxX - minX))), formatX)
  const anchorOf = (x: number): string => (maxX === minX ? 'middle' : px(x) - MARGIN.left < plotW * 0.1 ? 'start' : MARGIN.left + plotW - px(x) < plotW * 0.1 ? 'end' : 'middle')
  // One table row per measurement: two turns that began in the same millisecond are two rows.
  const rows = tableRows(series)
  return html`<figure class="chart" data-testid="${testid}">
<figcaption><b>${title}</b>${options.caption ? html` <span class="muted">${options.caption}</span>` : ''}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" role="img" aria-label="${title}" style="max-width:${WIDTH}px">
<g>${yTicks.map((tick) => html`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${py(tick)}" y2="${py(tick)}" stroke="currentColor" stroke-opacity="0.12"></line><text x="${MARGIN.left - 6}" y="${py(tick) + 4}" text-anchor="end">${formatY(tick)}</text>`)}</g>
<g data-testid="${testid}-x-ticks">${xTicks.map((tick) => html`<text x="${px(tick)}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="${anchorOf(tick)}" data-testid="x-tick">${formatX(tick)}</text>`)}</g>
<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="currentColor" stroke-opacity="0.4"></line>
<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="currentColor" stroke-opacity="0.4"></line>
<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle" data-testid="${testid}-x-label">${xLabel}</text>
<text x="12" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 12 ${MARGIN.top + plotH / 2})" data-testid="${testid}-y-label">${yLabel}</text>
${series.map((line, i) => {
  const colour = PALETTE[i % PALETTE.length] ?? '#3451b2'
  const points = line.points.map((point) => `${px(point.x).toFixed(1)},${py(point.y).toFixed(1)}`).join(' ')
  return html`<g data-series="${line.name}">${options.dots || line.points.length === 1 ? '' : html`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points}"></polyline>`}${line.points.map((point) => html`<circle cx="${px(point.x).toFixed(1)}" cy="${py(point.y).toFixed(1)}" r="${options.dots ? 2.5 : 3}" fill="${colour}"><title>${line.name}: ${formatY(point.y)} (${describeX(point.x)})</title></circle>`)}</g>`
})}
</svg>
<div class="legend">${series.map((line, i) => html`<span class="pill"><span style="color:${PALETTE[i % PALETTE.length] ?? '#3451b2'}">■</span> ${line.name}</span> `)}</div>
<details data-testid="${testid}-table"><summary>The numbers</summary><table><thead><tr><th>${xLabel}</th>${series.map((line) => html`<th>${line.name}</th>`)}</tr></thead><tbody>${rows.map(
    (row) => html`<tr><td>${describeX(row.x)}</td>${row.values.map((value) => html`<td>${value === undefined ? '' : formatY(value)}</td>`)}</tr>`,
  )}</tbody></table></details>
</figure>`
}

/** `ticks` without those whose label repeats the one before (a short span written in whole minutes). */
function distinctLabels(ticks: readonly number[], format: (x: number) => string): number[] {
  const kept: number[] = []
  let last: string | undefined
  for (const tick of ticks) {
    const label = format(tick)
    if (label === last) continue
    kept.push(tick)
    last = label
  }
  return kept
}

/** About `count` whole-number ticks from 1 to `n` (turn numbers), always with the first and the last. */
export function countTicks(n: number, count = 6): number[] {
  if (n <= count) return Array.from({ length: n }, (_, i) => i + 1)
  const step = Math.ceil((n - 1) / (count - 1))
  const ticks: number[] = []
  for (let tick = 1; tick < n; tick += step) ticks.push(tick)
  if (n - (ticks[ticks.length - 1] ?? 0) < step / 2) ticks.pop()
  return [...ticks, n]
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
  // Room for a label that says something (an activity line's event and the start of its text).
  const labelW = 320
  const plotW = WIDTH - labelW - MARGIN.right - 40
  const height = MARGIN.top + bars.length * row + 34
  const max = niceMax(Math.max(...bars.map((bar) => bar.value)))
  const short = (label: string): string => (label.length > 48 ? `${label.slice(0, 47)}…` : label)
  return html`<figure class="chart" data-testid="${testid}">
<figcaption><b>${title}</b>${options.caption ? html` <span class="muted">${options.caption}</span>` : ''}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="${title}" style="max-width:${WIDTH}px">
<text x="${labelW - 6}" y="${MARGIN.top - 2}" text-anchor="end" data-testid="${testid}-y-label">${categoryLabel}</text>
${bars.map((bar, i) => {
  const y = MARGIN.top + 4 + i * row
  const w = Math.max(1, (bar.value / max) * plotW)
  return html`<g><text x="${labelW - 6}" y="${y + 14}" text-anchor="end">${short(bar.label)}<title>${bar.label}${bar.detail ? ` (${bar.detail})` : ''}</title></text><rect x="${labelW}" y="${y + 2}" width="${w.toFixed(1)}" height="${row - 6}" fill="${PALETTE[0]}" rx="2"><title>${bar.label}: ${plain(bar.value)}</title></rect><text x="${labelW + w + 4}" y="${y + 14}">${plain(bar.value)}</text></g>`
})}
<text x="${labelW + plotW / 2}" y="${height - 6}" text-anchor="middle" data-testid="${testid}-x-label">${valueLabel}</text>
</svg>
<details data-testid="${testid}-table"><summary>The numbers</summary><table><thead><tr><th>${categoryLabel}</th><th>${valueLabel}</th><th></th></tr></thead><tbody>${bars.map(
    (bar) => html`<tr><td class="text">${bar.label}</td><td>${plain(bar.value)}</td><td class="text muted">${bar.detail ?? ''}</td></tr>`,
  )}</tbody></table></details>
</figure>`
}

export interface DayBarsOptions {
  testid: string
  title: string
  yLabel: string
  /** Running totals by day (x: the day's first millisecond, UTC), each series only on the days it changed. */
  series: Series[]
  caption?: string
}

/** Above this many bars a day's series are stacked into one bar (else grouped side by side). */
const GROUPED_MAX_BARS = 48

/**
 * Totals by day as bars: each day's value of every series (a series keeps its last total on days it
 * did not change), side by side while there is room, stacked beyond; every series with a value is a
 * bar of its own colour, so none hides behind another with the same count.
 */
export function dayBars(options: DayBarsOptions): Html {
  const { testid, title, yLabel, series } = options
  const days = [...new Set(series.flatMap((line) => line.points.map((point) => point.x)))].sort((a, b) => a - b)
  if (days.length === 0) return html`<figure class="chart" data-testid="${testid}"><figcaption><b>${title}</b></figcaption><p class="muted" data-testid="${testid}-empty">Nothing recorded yet.</p></figure>`
  const values = series.map((line) => {
    let total = 0
    const byDay = new Map(line.points.map((point) => [point.x, point.y]))
    return days.map((day) => {
      total = byDay.get(day) ?? total
      return total
    })
  })
  const stacked = days.length * series.length > GROUPED_MAX_BARS
  const dayTotals = days.map((_, d) => values.reduce((sum, row) => sum + (row[d] ?? 0), 0))
  const top = stacked ? Math.max(...dayTotals) : Math.max(...values.flat())
  // Four gridlines a whole number of memories apart: 0, 1, 2, 3, 4 at the least, never 1.25 of a memory.
  const maxY = 4 * Math.max(1, Math.ceil(top / 4))
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom
  const py = (y: number): number => MARGIN.top + plotH - (y / maxY) * plotH
  const slot = plotW / days.length
  // A day's group fills most of its slot, at most 40 px a bar (one day of four kinds stays readable).
  const groupW = Math.min(slot * 0.8, stacked ? 40 : 40 * series.length)
  const barW = stacked ? groupW : groupW / Math.max(1, series.length)
  const xOf = (d: number): number => MARGIN.left + slot * d + (slot - groupW) / 2
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * maxY)
  const labelEvery = Math.max(1, Math.ceil(days.length / 6))
  const labelled = days.flatMap((day, d) => (d % labelEvery === 0 || d === days.length - 1 ? [{ day, d }] : []))
  const anchorOf = (d: number): string => (days.length === 1 ? 'middle' : d === 0 ? 'start' : d === days.length - 1 ? 'end' : 'middle')
  return html`<figure class="chart" data-testid="${testid}">
<figcaption><b>${title}</b>${options.caption ? html` <span class="muted">${options.caption}</span>` : ''}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" role="img" aria-label="${title}" style="max-width:${WIDTH}px">
<g>${yTicks.map((tick) => html`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${py(tick)}" y2="${py(tick)}" stroke="currentColor" stroke-opacity="0.12"></line><text x="${MARGIN.left - 6}" y="${py(tick) + 4}" text-anchor="end">${plain(tick)}</text>`)}</g>
<g data-testid="${testid}-x-ticks">${labelled.map(({ day, d }) => {
  const x = anchorOf(d) === 'start' ? xOf(d) : anchorOf(d) === 'end' ? xOf(d) + groupW : xOf(d) + groupW / 2
  return html`<text x="${x.toFixed(1)}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="${anchorOf(d)}" data-testid="x-tick">${dayOf(day)}</text>`
})}</g>
<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="currentColor" stroke-opacity="0.4"></line>
<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="currentColor" stroke-opacity="0.4"></line>
<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle" data-testid="${testid}-x-label">day</text>
<text x="12" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 12 ${MARGIN.top + plotH / 2})" data-testid="${testid}-y-label">${yLabel}</text>
${series.map((line, i) => {
  const colour = PALETTE[i % PALETTE.length] ?? '#3451b2'
  return html`<g data-series="${line.name}">${days.map((day, d) => {
    const value = values[i]?.[d] ?? 0
    if (value === 0) return ''
    const below = stacked ? values.slice(0, i).reduce((sum, row) => sum + (row[d] ?? 0), 0) : 0
    const x = stacked ? xOf(d) : xOf(d) + i * barW
    const y = py(below + value)
    const h = py(below) - y
    return html`<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(1, barW - (stacked ? 0 : 2)).toFixed(1)}" height="${h.toFixed(1)}" fill="${colour}" data-testid="bar"><title>${line.name}: ${plain(value)} on ${dayOf(day)}</title></rect>${
      stacked || barW < 14 ? '' : html`<text x="${(x + barW / 2 - 1).toFixed(1)}" y="${(y - 3).toFixed(1)}" text-anchor="middle" font-size="11">${plain(value)}</text>`
    }`
  })}</g>`
})}
</svg>
<div class="legend">${series.map((line, i) => html`<span class="pill"><span style="color:${PALETTE[i % PALETTE.length] ?? '#3451b2'}">■</span> ${line.name}</span> `)}${stacked ? html`<span class="muted">(stacked: a day's bar is every kind together)</span>` : ''}</div>
<details data-testid="${testid}-table"><summary>The numbers</summary><table><thead><tr><th>day</th>${series.map((line) => html`<th>${line.name}</th>`)}</tr></thead><tbody>${days.map(
    (day, d) => html`<tr><td>${dayOf(day)}</td>${series.map((_, i) => html`<td>${plain(values[i]?.[d] ?? 0)}</td>`)}</tr>`,
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
