/**
 * `engram memories add|search|list|get|update|delete|history` (decision 0065) through `runCli` in a
 * temp home: each as `--user ID` or the agent, `--json` and the text a person reads; one user's id
 * is not found as another user; the ids a later process prints are the ones an earlier one gave.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

describe('engram memories', () => {
  let tmp: TempHome
  before(() => {
    tmp = makeTempHome()
  })
  after(() => tmp.cleanup())

  // biome-ignore lint/suspicious/noExplicitAny: the JSON envelope's data has the shape of each command's result.
  async function cli(args: string[], json = true): Promise<{ code: number; out: string; data: any; error?: { code: string; fix?: string } }> {
    let out = ''
    const code = await runCli([...args, '--home', tmp.home, ...(json ? ['--json'] : [])], {
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: () => true },
      env: tmp.env,
      cwd: tmp.home,
      isTTY: !json,
    })
    if (!json) return { code, out, data: undefined }
    const envelope = JSON.parse(out.trim().split('\n').pop() ?? '{}')
    return { code, out, data: envelope.data, error: envelope.error }
  }

  test('add, list, search, get, update, delete and history, each for its user', async () => {
    const added = await cli(['memories', 'add', 'Ada', 'sails', 'a', 'red', 'dinghy', '--user', 'ada'])
    assert.equal(added.code, 0)
    assert.equal(added.data.results[0].event, 'added')
    const adaId: string = added.data.results[0].id
    const bob = await cli(['memories', 'add', 'Bob collects blue stamps', '--user', 'bob', '--kind', 'lesson'])
    const bobId: string = bob.data.results[0].id
    const rule = await cli(['memories', 'add', 'Greet people by name', '--kind', 'always'])
    assert.equal(rule.data.results[0].owner, 'agent')

    // A later process lists the same ids.
    const listed = await cli(['memories', 'list', '--user', 'ada'])
    assert.deepEqual(listed.data.memories.map((m: { id: string }) => m.id).sort(), [adaId, rule.data.results[0].id].sort())
    const human = await cli(['memories', 'list', '--user', 'ada'], false)
    assert.match(human.out, new RegExp(`${adaId} {2}\\[lesson, user:ada\\] Ada sails a red dinghy`))
    assert.match(human.out, /\[always, agent\] Always: Greet people by name/)

    const found = await cli(['memories', 'search', 'red dinghy', '--user', 'ada'])
    assert.equal(found.data.memories[0].id, adaId)
    assert.ok(!found.data.memories.some((m: { id: string }) => m.id === bobId))

    assert.equal((await cli(['memories', 'get', adaId, '--user', 'ada'])).data.text, 'Ada sails a red dinghy')
    for (const command of [['get', bobId], ['update', bobId, 'Bob sold his stamps'], ['delete', bobId], ['history', bobId]]) {
      const refused = await cli(['memories', ...command, '--user', 'ada'])
      assert.equal(refused.code, 3, command.join(' '))
      assert.equal(refused.error?.code, 'not_found')
    }

    const updated = await cli(['memories', 'update', adaId, 'Ada sails a green dinghy', '--user', 'ada'])
    assert.equal(updated.data.event, 'updated')
    const deleted = await cli(['memories', 'delete', updated.data.id, '--user', 'ada', '--purge'])
    assert.equal(deleted.data.action, 'purged')
    assert.equal((await cli(['memories', 'list', '--user', 'ada', '--kind', 'lesson'])).data.total, 0)
    const history = await cli(['memories', 'history', rule.data.results[0].id])
    assert.equal(history.error?.code, 'invalid_argument')
  })

  test('bad input is refused with its fix', async () => {
    for (const args of [['memories', 'add'], ['memories', 'get'], ['memories', 'list', '--limit', '0'], ['memories', 'add', 'x', '--kind', 'opinion'], ['memories', 'update', 'mem_x']]) {
      const refused = await cli(args)
      assert.equal(refused.code, 3, args.join(' '))
      assert.equal(refused.error?.code, 'invalid_argument')
      assert.ok(refused.error?.fix)
    }
  })
})
