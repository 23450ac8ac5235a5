import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, stepCountIs } from 'ai'
import { ManualClock } from '../core/clock.ts'
import { createMind, type Mind } from '../mind.ts'
import { createProcedureStore } from '../memory/procedures/procedure-store.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../testing/temp-home.ts'
import { toAiSdkTools } from './ai-sdk-tools.ts'
import { executeToolCall, toEngramTools, toOpenAiFunctions } from './adapters.ts'
import { createToolDispatcher } from './dispatcher.ts'
import { buildReadMemoryFileTool, buildWriteMemoryFileTool } from './memory-files.ts'
import { createReportProcedureOutcomeTool } from './report-procedure-outcome-tool.ts'

/** A chat-completions response whose assistant message calls tools. */
function toolCallResponse(calls: Array<{ id: string; name: string; args: string }>): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'fake-model',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: { role: 'assistant', content: null, tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } })) },
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  })
}

describe('tool adapters', () => {
  let temp: TempHome
  let mind: Mind
  let server: FakeOpenAiServer
  const clock = new ManualClock('2026-02-03T10:00:00Z')
  const tools = () => {
    const procedures = createProcedureStore({ documents: mind.backend.documents, locks: mind.backend.locks, clock })
    return [
      buildReadMemoryFileTool({ layout: mind.layout }),
      buildWriteMemoryFileTool({ layout: mind.layout, documents: mind.backend.documents, activity: mind.backend.activity, locks: mind.backend.locks, clock }),
      createReportProcedureOutcomeTool(procedures),
    ]
  }

  before(async () => {
    temp = makeTempHome('engram-adapters-')
    mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
    server = await startFakeOpenAiServer()
  })
  after(async () => {
    await server.close()
    await mind.close()
    temp.cleanup()
  })

  test('OpenAI function definitions carry each tool JSON schema, without $schema', () => {
    const functions = toOpenAiFunctions(tools())
    assert.deepEqual(
      functions.map((f) => f.function.name),
      ['read_memory_file', 'write_memory_file', 'report_procedure_outcome'],
    )
    const write = functions[1]
    assert.equal(write?.type, 'function')
    assert.equal(write?.function.parameters.type, 'object')
    assert.equal(write?.function.parameters.$schema, undefined)
    assert.deepEqual(write?.function.parameters.required, ['path', 'content'])
    const report = functions[2]?.function.parameters as { properties: Record<string, unknown>; required: string[] }
    assert.deepEqual(Object.keys(report.properties), ['procedure', 'success', 'note'])
    assert.deepEqual(report.required, ['procedure', 'success'])
  })

  test('executeToolCall runs calls and turns bad JSON, unknown names and handler errors into readable results', async () => {
    const engramTools = toEngramTools(tools())
    const ok = await executeToolCall(engramTools, 'write_memory_file', JSON.stringify({ path: 'knowledge/oolong.md', content: 'Oolong: 90 °C.' }))
    assert.equal(ok.isError, undefined, ok.text)
    assert.match(readFileSync(join(mind.layout.knowledgeDir, 'oolong.md'), 'utf8'), /Oolong: 90 °C\./)
    const badJson = await executeToolCall(engramTools, 'read_memory_file', '{"path": ')
    assert.equal(badJson.isError, true)
    assert.match(badJson.text, /not valid JSON[\s\S]*Fix:/)
    const unknown = await executeToolCall(engramTools, 'rm_rf', '{}')
    assert.match(unknown.text, /no tool named "rm_rf"[\s\S]*read_memory_file, write_memory_file, report_procedure_outcome/)
    // A ToolDefinition whose run() throws (unknown procedure) becomes an isError result.
    const thrown = await executeToolCall(engramTools, 'report_procedure_outcome', JSON.stringify({ procedure: 'nothing-like-this', success: true }))
    assert.equal(thrown.isError, true)
    assert.match(thrown.text, /nothing-like-this/)
    const invalid = await executeToolCall(engramTools, 'report_procedure_outcome', JSON.stringify({ procedure: 'x' }))
    assert.equal(invalid.isError, true)
    assert.match(invalid.text, /success/)
  })

  test('a dispatcher keeps its observers on every call made through the adapters', async () => {
    const seen: string[] = []
    const dispatcher = createToolDispatcher({
      tools: [createReportProcedureOutcomeTool(createProcedureStore({ documents: mind.backend.documents, locks: mind.backend.locks, clock }))],
      observers: [{ onPreExecute: (call) => seen.push(`pre:${call.tool}`), onPostExecute: (call, result) => seen.push(`post:${call.tool}:${result.isError}`) }],
    })
    const result = await executeToolCall(toEngramTools(dispatcher), 'report_procedure_outcome', JSON.stringify({ procedure: 'missing', success: false }))
    assert.equal(result.isError, true)
    assert.deepEqual(seen, ['pre:report_procedure_outcome', 'post:report_procedure_outcome:true'])
  })

  test('generateText against an OpenAI-compatible server runs the tools; a refused call comes back as readable text', async () => {
    server.script([
      {
        raw: toolCallResponse([
          { id: 'call_1', name: 'write_memory_file', args: JSON.stringify({ path: 'knowledge/matcha.md', content: '# Matcha\nWhisk, do not steep.' }) },
          { id: 'call_2', name: 'read_memory_file', args: JSON.stringify({ path: '../../etc/passwd' }) },
        ]),
        contentType: 'application/json',
      },
      { text: 'Saved your note about matcha.' },
    ])
    const provider = createOpenAICompatible({ name: 'fake', baseURL: server.url, apiKey: 'test-key' })
    const result = await generateText({
      model: provider('fake-model'),
      prompt: 'Remember how to make matcha.',
      tools: toAiSdkTools(tools()),
      stopWhen: stepCountIs(3),
    })
    assert.equal(result.text, 'Saved your note about matcha.')
    assert.match(readFileSync(join(mind.layout.knowledgeDir, 'matcha.md'), 'utf8'), /Whisk, do not steep\./)

    // The second request carries both tool results back to the model, the refusal as text.
    const second = server.requests.filter((request) => request.path === '/v1/chat/completions')[1]
    const toolMessages = ((second?.body.messages ?? []) as Array<{ role: string; tool_call_id?: string; content: string }>).filter((message) => message.role === 'tool')
    assert.equal(toolMessages.length, 2)
    const wrote = toolMessages.find((message) => message.tool_call_id === 'call_1')
    const refused = toolMessages.find((message) => message.tool_call_id === 'call_2')
    assert.match(wrote?.content ?? '', /Wrote knowledge\/matcha\.md/)
    assert.match(refused?.content ?? '', /Error: Refused path \\?"\.\.\/\.\.\/etc\/passwd\\?"[\s\S]*Fix:/)
    const tools0 = ((server.requests[0]?.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name)
    assert.deepEqual(tools0, ['read_memory_file', 'write_memory_file', 'report_procedure_outcome'])
  })
})
