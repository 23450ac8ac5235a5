/**
 * Structured output that survives servers which only do chat completions: the JSON Schema is also
 * written into the system prompt (many local servers ignore `response_format`), and an answer the
 * AI SDK could not parse gets one more, careful reading (code fences, prose around the object)
 * before it is declared invalid. Whatever is salvaged is still validated against the zod schema.
 */
import { z } from 'zod'

const EXCERPT_CHARS = 200

/** The system prompt, extended with the instruction to answer with JSON matching `schema`. */
export function structuredSystemPrompt(system: string | undefined, schema: z.ZodType<unknown>, name: string | undefined): string {
  const jsonSchema = describeSchema(schema)
  const what = name ? ` (${name})` : ''
  const instruction = [
    `Answer with one JSON object${what} and nothing else: no prose, no code fences.`,
    jsonSchema ? `It must match this JSON Schema:\n${jsonSchema}` : undefined,
  ]
    .filter(Boolean)
    .join('\n')
  return system ? `${system}\n\n${instruction}` : instruction
}

function describeSchema(schema: z.ZodType<unknown>): string | undefined {
  try {
    return JSON.stringify(z.toJSONSchema(schema, { unrepresentable: 'any' }))
  } catch {
    // Schemas with transforms or custom types cannot always be expressed; the SDK's own
    // response_format conversion and the validation below still apply.
    return undefined
  }
}

export type SalvageResult<T> = { ok: true; value: T } | { ok: false; reason: 'not_json' | 'schema'; detail: string }

/**
 * Read a JSON object out of model text: the whole text, a fenced ```json block, or the span from
 * the first `{` to the last `}`; the first candidate that parses is validated against `schema`.
 */
export function salvageStructuredOutput<T>(text: string, schema: z.ZodType<T>): SalvageResult<T> {
  let parsed: { value: unknown } | undefined
  for (const candidate of jsonCandidates(text)) {
    try {
      parsed = { value: JSON.parse(candidate) }
      break
    } catch {
      // try the next candidate
    }
  }
  if (!parsed) return { ok: false, reason: 'not_json', detail: 'the answer is not JSON' }
  const result = schema.safeParse(parsed.value)
  if (result.success) return { ok: true, value: result.data }
  return { ok: false, reason: 'schema', detail: summarizeIssues(result.error) }
}

function* jsonCandidates(text: string): Generator<string> {
  const trimmed = text.trim()
  yield trimmed
  const fenced = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/.exec(trimmed)
  if (fenced?.[1]) yield fenced[1].trim()
  const first = trimmed.indexOf('{')
  const last = trimmed.lastIndexOf('}')
  if (first !== -1 && last > first) yield trimmed.slice(first, last + 1)
}

/** A short, readable list of zod issues: `summary: expected string, received number; …`. */
export function summarizeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ')
}

/** The first characters of a model answer, on one line, for error messages. */
export function excerpt(text: string | undefined): string {
  if (text === undefined) return '(no text)'
  const oneLine = text.replace(/\s+/g, ' ').trim()
  if (oneLine === '') return '(empty)'
  return oneLine.length > EXCERPT_CHARS ? `${oneLine.slice(0, EXCERPT_CHARS)}…` : oneLine
}
