/** The memory-file examples printed in the Anton seed (001, "Memory Entry Format"), byte for byte. */
export const SEED_RULES = `# Rules

## Always
- Use httpx instead of requests <!-- confidence:high source:user ts:2026-02-27 -->
- Call progress() before llm.complete() in scratchpad <!-- confidence:high source:consolidation ts:2026-02-27 -->

## Never
- Use time.sleep() in scratchpad cells <!-- confidence:high source:consolidation ts:2026-02-27 -->

## When
- If fetching paginated API data → async + progress() between pages <!-- confidence:medium source:consolidation ts:2026-02-27 -->
`

export const SEED_LESSONS = `# Lessons
- CoinGecko free tier rate-limits at ~50 req/min <!-- topic:api-coingecko ts:2026-02-27 -->
- Bitcoin price data via /coins/bitcoin/market_chart/range <!-- topic:api-coingecko ts:2026-02-27 -->
- pandas read_csv needs encoding='utf-8-sig' for BOM files <!-- topic:pandas ts:2026-02-27 -->
`

export const SEED_PROFILE = `# Profile
- Name: Jorge
- Timezone: PST
- Expertise: Python, data analysis, API integrations
- Communication: concise, direct
- Tools: prefers uv over pip, uses VS Code, macOS
`
