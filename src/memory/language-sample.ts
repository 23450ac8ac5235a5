/**
 * Which languages a home's memory is in (decision 0076), for `engram status` and `doctor`: the
 * language of a sample of indexed units, spread over the whole index, and what engram's offline
 * analysis does for each. Derived each time from the index, nothing stored.
 */
import type { SearchIndex } from '../storage/contracts.ts'
import { detectLanguage, fullyAnalysedLanguages, type LanguageAnalysis } from '../text/languages/detect.ts'

/** Units looked at: this many pages of PAGE, at offsets spread evenly over the index. */
const PAGES = 10
const PAGE = 100

export interface LanguageSample {
  /** Units whose language was detected. */
  sampled: number
  /** Languages found, most units first. */
  found: Array<{ language: string; units: number; analysis: LanguageAnalysis }>
  /** Languages that get stemming, stop words and related words; every other one gets its words. */
  full: string[]
}

export async function sampleLanguages(index: SearchIndex, units: number): Promise<LanguageSample> {
  const counts = new Map<string, { units: number; analysis: LanguageAnalysis }>()
  let sampled = 0
  const step = Math.max(PAGE, Math.floor(units / PAGES))
  for (let offset = 0; offset < units && offset < step * PAGES; offset += step) {
    for (const unit of await index.list({}, { limit: PAGE, offset })) {
      const language = detectLanguage(unit.text)
      const count = counts.get(language.name) ?? { units: 0, analysis: language.analysis }
      count.units++
      counts.set(language.name, count)
      sampled++
    }
  }
  const found = [...counts].map(([language, { units: n, analysis }]) => ({ language, units: n, analysis })).sort((a, b) => b.units - a.units)
  return { sampled, found, full: fullyAnalysedLanguages() }
}

/** One line: which languages get full analysis, and the languages found with their share. */
export function describeLanguages(sample: LanguageSample): string {
  const full = `full analysis (stemming, stop words, related words): ${sample.full.join(', ')}`
  if (sample.sampled === 0) return `${full}; every other language: its words only`
  const found = sample.found.map((each) => `${each.language} ${Math.round((100 * each.units) / sample.sampled)}%${each.analysis === 'full' ? '' : ' (words only)'}`)
  return `${full}; every other language: its words only. In ${sample.sampled} sampled units: ${found.join(', ')}`
}
