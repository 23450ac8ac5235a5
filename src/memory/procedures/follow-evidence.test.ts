import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ActivityRecord } from '../../storage/contracts.ts'
import { followedBecause, type LoggedTurn, loggedTurns, type ShownText } from './follow-evidence.ts'

const DEPLOY: ShownText = {
  kind: 'procedure',
  name: 'deploy-staging',
  text: '# Deploy staging\n\n1. Run the test suite with npm test\n2. Run kamal deploy -d staging\n3. Check the health page\n',
}
const ROTATE: ShownText = { kind: 'procedure', name: 'rotate-ftp', text: '# Rotate the FTP password\n\n1. Generate a new password for the partner FTP account\n2. Update the vault entry\n' }
const MEMORY_TOOLS = new Set(['search_memory', 'read_memory_file', 'recall_skill', 'report_procedure_outcome'])

const turn = (number: number, message: string, calls: Array<[string, unknown]> = [], replies: string[] = []): LoggedTurn => ({
  number,
  message,
  calls: calls.map(([tool, input]) => ({ tool, input: JSON.stringify(input) })),
  replies,
})

test('opening a procedure by name follows it; a search that finds it does not', () => {
  assert.equal(followedBecause(DEPLOY, turn(1, 'deploy'), turn(2, 'ok', [['read_memory_file', { path: 'users/ada/procedures/deploy-staging.md' }]]), MEMORY_TOOLS), 'the agent called read_memory_file on it')
  assert.equal(followedBecause(DEPLOY, turn(1, 'deploy', [['report_procedure_outcome', { procedure: 'deploy-staging', success: true }]]), undefined, MEMORY_TOOLS), 'the agent called report_procedure_outcome on it')
  assert.equal(followedBecause(DEPLOY, turn(1, 'deploy', [['search_memory', { query: 'npm test kamal deploy staging health page' }]]), undefined, MEMORY_TOOLS), undefined)
  const skill: ShownText = { kind: 'skill', name: 'csv_summary', text: 'Summarise a CSV file' }
  assert.match(String(followedBecause(skill, turn(1, 'summarise this', [['recall_skill', { label: 'CSV_summary' }]]), undefined, MEMORY_TOOLS)), /recall_skill/)
})

test('a step or the name is borne out by two of its words and half of them; one shared word is incidental', () => {
  assert.match(String(followedBecause(DEPLOY, turn(1, 'please ship it', [['shell', { command: 'kamal deploy -d staging' }]]), undefined, MEMORY_TOOLS)), /kamal|deploy/)
  assert.match(String(followedBecause(DEPLOY, turn(1, 'ship it', [], ['First I ran the test suite with npm.']), undefined, MEMORY_TOOLS)), /step/)
  // "new" and "update" are words of rotate-ftp's steps, but one of a step is no step.
  assert.equal(followedBecause(ROTATE, turn(1, 'deploy the new release', [['shell', { command: 'kamal deploy' }]], ['Deployed the new release; I will update the changelog.']), undefined, MEMORY_TOOLS), undefined)
  // The user's next message counts; the message it was shown for does not.
  assert.equal(followedBecause(ROTATE, turn(1, 'rotate the ftp password'), undefined, MEMORY_TOOLS), undefined)
  assert.match(String(followedBecause(ROTATE, turn(1, 'rotate the ftp password'), turn(2, 'Done, I rotated the FTP password myself.'), MEMORY_TOOLS)), /name/)
})

test('the log is read back into numbered turns of one session', () => {
  const at = (s: number): string => `2026-03-02T09:00:0${s}.000Z`
  const records = [
    { ts: at(0), type: 'message_received', content: 'deploy', session: 's', meta: { turn: 1 } },
    { ts: at(1), type: 'tool_use', tool: 'shell', session: 's', meta: { input: '{"command":"npm test"}' } },
    { ts: at(2), type: 'tool_use', tool: 'shell', session: 'other', meta: { input: '{"command":"rm"}' } },
    { ts: at(3), type: 'response_sent', content: 'done', session: 's' },
    { ts: at(4), type: 'message_received', content: 'unnumbered', session: 's' },
    { ts: at(5), type: 'tool_use', tool: 'lost', session: 's', meta: {} },
    { ts: at(6), type: 'message_received', content: 'thanks', session: 's', meta: { turn: 2 } },
    // An MCP client's calls: no message, each call logged with its turn's number.
    { ts: at(7), type: 'tool_use', tool: 'read_memory_file', session: 's', meta: { turn: 3, input: '{"path":"procedures/x.md"}' } },
    { ts: at(8), type: 'tool_use', tool: 'memorize', session: 's', meta: { turn: 3, input: '{}' } },
    { ts: at(9), type: 'tool_use', tool: 'search_memory', session: 's', meta: { turn: 4, input: '{}' } },
  ].map((record, i) => ({ ...record, ref: `activity/2026-03-02.jsonl#L${i + 1}` })) as ActivityRecord[]
  assert.deepEqual(loggedTurns(records, 's'), [
    { number: 1, message: 'deploy', calls: [{ tool: 'shell', input: '{"command":"npm test"}' }], replies: ['done'] },
    { number: 2, message: 'thanks', calls: [], replies: [] },
    { number: 3, message: '', calls: [{ tool: 'read_memory_file', input: '{"path":"procedures/x.md"}' }, { tool: 'memorize', input: '{}' }], replies: [] },
    { number: 4, message: '', calls: [{ tool: 'search_memory', input: '{}' }], replies: [] },
  ])
})
