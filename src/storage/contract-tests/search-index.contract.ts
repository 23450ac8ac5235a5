/**
 * Contract suite for SearchIndex: SQLite (sqlite-vec or TypeScript vectors) and PostgreSQL
 * (BM25 over term rows + pgvector) must all pass it. Vectors in this suite have 4 dimensions; `make` must
 * return an empty index that accepts them. Lexical tests run when `capabilities.fullText`, dense
 * tests when `capabilities.vectors`.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { EngramError } from '../../core/errors.ts'
import { type IndexUnit, type SearchIndex, UNIT_KINDS } from '../contracts.ts'

export interface SearchIndexFixture {
  index: SearchIndex
  cleanup(): Promise<void>
}

function unit(id: string, text: string, extra: Partial<IndexUnit> = {}): IndexUnit {
  return {
    id,
    kind: 'knowledge',
    text,
    source: 'knowledge/test.md',
    provenance: [],
    createdAt: '2026-02-01T00:00:00.000Z',
    hash: `h:${text}`,
    ...extra,
  }
}

function vec(...values: number[]): Float32Array {
  return new Float32Array(values)
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(EngramError.is(error), `expected an EngramError, got ${String(error)}`)
    assert.equal(error.code, code)
    return true
  })
}

/** Registers the SearchIndex contract tests under `describe(name)`. */
export function runSearchIndexContract(name: string, make: () => Promise<SearchIndexFixture>): void {
  async function withIndex(fn: (index: SearchIndex) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture.index)
    } finally {
      await fixture.cleanup()
    }
  }

  describe(`SearchIndex contract: ${name}`, () => {
    test('units round-trip through upsert and get, with access statistics at zero', () =>
      withIndex(async (index) => {
        const full: IndexUnit = {
          id: 'rule:global:1',
          kind: 'rule',
          text: 'Always run the tests before committing',
          source: 'memory/rules.md',
          provenance: ['memory/rules.md#L3'],
          scope: 'global',
          agent: 'alpha',
          user: 'ann',
          owner: 'user:ann',
          createdAt: '2026-01-05T08:00:00.000Z',
          updatedAt: '2026-01-06T08:00:00.000Z',
          hash: 'abc',
          links: ['testing'],
          meta: { confidence: 'high' },
        }
        await index.upsert([full, unit('k1', 'plain unit')])
        const [stored, plain, ...rest] = await index.get(['rule:global:1', 'k1', 'missing'])
        assert.equal(rest.length, 0)
        assert.deepEqual(stored, { ...full, accessCount: 0, lastAccessAt: undefined })
        assert.equal(plain?.scope, undefined)
        assert.equal(plain?.agent, undefined)
        assert.equal(plain?.owner, 'agent')
        assert.deepEqual(plain?.provenance, [])
        assert.deepEqual(await index.get([]), [])
      }))

    test('a viewer finds only its own, its agent’s and shared memories (decision 0017)', () =>
      withIndex(async (index) => {
        const owned = (id: string, owner: IndexUnit['owner'], agent: string | undefined): IndexUnit => ({ ...unit(id, `salary figure ${id}`), owner, agent })
        await index.upsert([
          owned('ann-a', 'user:ann', 'alpha'),
          owned('bob-a', 'user:bob', 'alpha'),
          owned('agent-a', 'agent', 'alpha'),
          owned('agent-b', 'agent', 'beta'),
          owned('ann-b', 'user:ann', 'beta'),
          owned('shared', 'shared', undefined),
          owned('ann-profile', 'user:ann', undefined),
        ])
        const found = async (viewer: { agent: string; user?: string }): Promise<string[]> =>
          (await index.search({ text: 'salary figure', viewer, limit: 20 })).map((c) => c.id).sort()
        assert.deepEqual(await found({ agent: 'alpha', user: 'ann' }), ['agent-a', 'ann-a', 'ann-profile', 'shared'])
        assert.deepEqual(await found({ agent: 'alpha', user: 'bob' }), ['agent-a', 'bob-a', 'shared'])
        assert.deepEqual(await found({ agent: 'alpha' }), ['agent-a', 'shared'])
        assert.deepEqual(await found({ agent: 'beta', user: 'ann' }), ['agent-b', 'ann-b', 'ann-profile', 'shared'])
      }))

    test('list pages through the units a filter admits, by source then as written, a viewer seeing only its own', () =>
      withIndex(async (index) => {
        const at = (id: string, source: string, extra: Partial<IndexUnit> = {}): IndexUnit => ({ ...unit(id, `entry ${id}`), source, ...extra })
        await index.upsert([
          at('z1', 'memory/z.md', { kind: 'rule', agent: 'alpha' }),
          at('b2', 'memory/b.md', { kind: 'lesson', agent: 'alpha' }),
          at('a1', 'memory/a.md', { kind: 'rule', agent: 'alpha', scope: 'global' }),
          at('b1', 'memory/b.md', { kind: 'lesson', agent: 'alpha' }),
          at('ann', 'users/ann/memory/a.md', { kind: 'rule', agent: 'alpha', owner: 'user:ann', user: 'ann' }),
          at('bob', 'users/bob/memory/a.md', { kind: 'rule', agent: 'alpha', owner: 'user:bob', user: 'bob' }),
          at('m1', 'conv:1', { kind: 'message', agent: 'alpha' }),
          at('Z', 'memory/Z.md', { kind: 'rule', agent: 'alpha' }),
        ])
        await index.upsert([at('b2', 'memory/b.md', { kind: 'lesson', agent: 'alpha', text: 'entry b2 again', hash: 'b2-again' })])
        const ids = async (filter: Parameters<SearchIndex['list']>[0], page: Parameters<SearchIndex['list']>[1] = { limit: 100 }) =>
          (await index.list(filter, page)).map((u) => u.id)
        // Code-point order of sources (upper case first), then the order units were first written (b2 kept its place when replaced).
        assert.deepEqual(await ids({}), ['m1', 'Z', 'a1', 'b2', 'b1', 'z1', 'ann', 'bob'])
        assert.deepEqual(await ids({ viewer: { agent: 'alpha', user: 'ann' } }), ['m1', 'Z', 'a1', 'b2', 'b1', 'z1', 'ann'])
        assert.deepEqual(await ids({ viewer: { agent: 'alpha' }, kinds: ['rule'] }), ['Z', 'a1', 'z1'])
        assert.deepEqual(await ids({ scope: 'global' }), ['a1'])
        assert.deepEqual(await ids({ viewer: { agent: 'beta' } }), [])
        const pages = [...(await ids({}, { limit: 3 })), ...(await ids({}, { limit: 3, offset: 3 })), ...(await ids({}, { limit: 3, offset: 6 }))]
        assert.deepEqual(pages, await ids({}))
        assert.deepEqual(await ids({}, { limit: 0 }), [])
        const [listed] = await index.list({ sources: ['memory/b.md'] }, { limit: 1 })
        assert.deepEqual(listed, (await index.get(['b2']))[0], 'a listed unit is the unit get returns')
        await rejectsWithCode(index.list({}, { limit: -1 }), 'invalid_argument')
        await rejectsWithCode(index.list({}, { limit: 10, offset: 1.5 }), 'invalid_argument')
        await rejectsWithCode(index.list({}, { limit: 1_000_000 }), 'invalid_argument')
      }))

    test('upsert is idempotent and replaces a unit by id, keeping its access statistics', () =>
      withIndex(async (index) => {
        await index.upsert([unit('k1', 'first version about gardening')])
        await index.recordAccess(['k1'], '2026-02-02T00:00:00.000Z')
        await index.upsert([unit('k1', 'first version about gardening')])
        await index.upsert([unit('k1', 'second version about sailing', { kind: 'topic' })])
        const counts = await index.count()
        assert.equal(counts.knowledge, 0)
        assert.equal(counts.topic, 1)
        const [stored] = await index.get(['k1'])
        assert.equal(stored?.text, 'second version about sailing')
        assert.equal(stored?.accessCount, 1)
        if (index.capabilities.fullText) {
          assert.deepEqual(await index.search({ text: 'gardening', limit: 5 }), [])
          assert.deepEqual(
            (await index.search({ text: 'sailing', limit: 5 })).map((c) => c.id),
            ['k1'],
          )
        }
      }))

    test('a batch holding one id twice keeps the later unit, in every channel', () =>
      withIndex(async (index) => {
        await index.upsert([unit('k1', 'old note about gardening'), unit('k2', 'a note about tides'), unit('k1', 'new note about sailing')])
        const [stored] = await index.get(['k1'])
        assert.equal(stored?.text, 'new note about sailing')
        assert.equal(Object.values(await index.count()).reduce((sum, n) => sum + n, 0), 2)
        if (index.capabilities.fullText) {
          assert.deepEqual(await index.search({ text: 'gardening', limit: 5 }), [])
          assert.deepEqual(
            (await index.search({ text: 'sailing', limit: 5 })).map((c) => c.id),
            ['k1'],
          )
        }
      }))

    test('lexical search ranks better matches first with positive scores', async (t) => {
      await withIndex(async (index) => {
        if (!index.capabilities.fullText) return t.skip('no full-text search')
        await index.upsert([
          unit('a', 'the quarterly budget review meeting is on friday'),
          unit('b', 'budget budget budget: the budget spreadsheet for the budget review'),
          unit('c', 'notes about hiking in the alps'),
        ])
        const hits = await index.search({ text: 'budget review', limit: 10 })
        assert.deepEqual(hits.map((h) => h.id).sort(), ['a', 'b'])
        assert.equal(hits[0]!.id, 'b')
        for (const hit of hits) {
          assert.ok(hit.lexical! > 0, `score ${hit.lexical} is positive`)
          assert.equal(hit.dense, undefined)
          assert.equal(hit.kind, 'knowledge')
        }
        assert.ok(hits[0]!.lexical! >= hits[1]!.lexical!)
        assert.equal((await index.search({ text: 'budget', limit: 1 })).length, 1, 'limit applies per channel')
      })
    })

    test('a unit handed up with a candidate is the unit get returns, access statistics included', async (t) => {
      await withIndex(async (index) => {
        if (!index.capabilities.fullText) return t.skip('no full-text search')
        await index.upsert([
          unit('a', 'the harbour ferry leaves at noon', { kind: 'episode', meta: { name: 'Ann' }, links: ['ferries'], agent: 'alpha' }),
          unit('b', 'ferry tickets are sold at the kiosk', { kind: 'lesson' }),
        ])
        await index.recordAccess(['a'], '2026-05-01T10:00:00.000Z')
        for (const query of [{ text: 'ferry', limit: 5 }, { text: 'ferry', kinds: ['lesson' as const], limit: 5 }, { text: 'ferry', agent: 'alpha', limit: 5 }]) {
          const hits = await index.search(query)
          assert.ok(hits.length > 0)
          const stored = new Map((await index.get(hits.map((h) => h.id))).map((u) => [u.id, u]))
          for (const hit of hits) if (hit.unit) assert.deepEqual(hit.unit, stored.get(hit.id), `${hit.id} for ${JSON.stringify(query)}`)
        }
      })
    })

    test('arbitrary user text never breaks the lexical query', async (t) => {
      await withIndex(async (index) => {
        if (!index.capabilities.fullText) return t.skip('no full-text search')
        await index.upsert([unit('a', 'near the river (north side) - an "old" mill*'), unit('b', 'NOT AND OR keywords')])
        const nasty = ['"', '""', 'mill"', '*', 'mill*', 'NEAR(river mill)', 'NEAR', '-north', '(', ')', '()', 'a:b', '^river', 'AND', 'OR NOT', "what's", '\\', '{}[]']
        for (const text of nasty) await assert.doesNotReject(index.search({ text, limit: 5 }), `query ${JSON.stringify(text)}`)
        assert.deepEqual(
          (await index.search({ text: '(river)', limit: 5 })).map((h) => h.id),
          ['a'],
        )
        assert.deepEqual(
          (await index.search({ text: 'NOT', limit: 5 })).map((h) => h.id),
          ['b'],
          'operators are searched as words',
        )
        for (const text of ['', '   ', '!!! ??? ...', '"()*-^']) assert.deepEqual(await index.search({ text, limit: 5 }), [])
      })
    })

    test('dense search returns nearest units with cosine similarity, merged with lexical hits', async (t) => {
      await withIndex(async (index) => {
        if (!index.capabilities.vectors) return t.skip('no vector search')
        await index.upsert([
          unit('x', 'east facing window', { vector: vec(1, 0, 0, 0) }),
          unit('y', 'north facing window', { vector: vec(0, 1, 0, 0) }),
          unit('xy', 'north east corner', { vector: vec(1, 1, 0, 0) }),
          unit('none', 'a unit without vector'),
        ])
        const hits = await index.search({ vector: vec(1, 0.1, 0, 0), limit: 2 })
        assert.deepEqual(
          hits.map((h) => h.id),
          ['x', 'xy'],
        )
        assert.ok(Math.abs(hits[0]!.dense! - 1 / Math.sqrt(1.01)) < 1e-4)
        assert.ok(hits[0]!.dense! > hits[1]!.dense!)
        assert.equal(hits[0]!.lexical, undefined)
        const opposite = await index.search({ vector: vec(-1, 0, 0, 0), limit: 3 })
        assert.ok(opposite.some((h) => Math.abs(h.dense! + 1) < 1e-4), 'similarity reaches -1')
        if (index.capabilities.fullText) {
          const both = await index.search({ text: 'north', vector: vec(0, 1, 0, 0), limit: 3 })
          const y = both.find((h) => h.id === 'y')
          assert.ok(y?.lexical !== undefined && y.lexical > 0)
          assert.ok(y?.dense !== undefined && Math.abs(y.dense - 1) < 1e-4)
          assert.equal(new Set(both.map((h) => h.id)).size, both.length, 'one candidate per unit')
        }
      })
    })

    test('a vector of other dimensions is refused', async (t) => {
      await withIndex(async (index) => {
        if (!index.capabilities.vectors) return t.skip('no vector search')
        await index.upsert([unit('x', 'x', { vector: vec(1, 0, 0, 0) })])
        await rejectsWithCode(index.upsert([unit('y', 'y', { vector: vec(1, 0, 0) })]), 'invalid_argument')
        await rejectsWithCode(index.search({ vector: vec(1, 0), limit: 3 }), 'invalid_argument')
        assert.deepEqual(await index.get(['y']), [], 'the failed batch stored nothing')
      })
    })

    test('re-upserting unchanged content without a vector keeps it; changed content drops it', async (t) => {
      await withIndex(async (index) => {
        if (!index.capabilities.vectors) return t.skip('no vector search')
        await index.upsert([unit('x', 'same text', { vector: vec(1, 0, 0, 0) })])
        await index.upsert([unit('x', 'same text')])
        assert.deepEqual(
          (await index.search({ vector: vec(1, 0, 0, 0), limit: 3 })).map((h) => h.id),
          ['x'],
        )
        await index.upsert([unit('x', 'different text')])
        assert.deepEqual(await index.search({ vector: vec(1, 0, 0, 0), limit: 3 }), [])
      })
    })

    test('filters apply to both channels', async () => {
      await withIndex(async (index) => {
        const v = index.capabilities.vectors ? vec(1, 0, 0, 0) : undefined
        await index.upsert([
          unit('old', 'shared word', { createdAt: '2025-01-01T00:00:00.000Z', vector: v, agent: 'alpha', user: 'ann', scope: 'global' }),
          unit('new', 'shared word', { createdAt: '2026-06-01T00:00:00.000Z', vector: v, agent: 'beta', source: 'episodes/2026-06-01.md', kind: 'episode' }),
          unit('proj', 'shared word', { createdAt: '2026-03-01T00:00:00.000Z', vector: v, scope: 'project', kind: 'lesson', source: 'memory/lessons.md' }),
        ])
        const channels = [
          ...(index.capabilities.fullText ? [{ text: 'shared' }] : []),
          ...(v ? [{ vector: v }] : []),
        ]
        for (const channel of channels) {
          const ids = async (filter: object) => (await index.search({ ...channel, ...filter, limit: 10 })).map((h) => h.id).sort()
          assert.deepEqual(await ids({}), ['new', 'old', 'proj'])
          assert.deepEqual(await ids({ kinds: ['episode', 'lesson'] }), ['new', 'proj'])
          assert.deepEqual(await ids({ sources: ['memory/lessons.md', 'nowhere'] }), ['proj'])
          assert.deepEqual(await ids({ scope: 'global' }), ['old'])
          assert.deepEqual(await ids({ agent: 'beta' }), ['new'])
          assert.deepEqual(await ids({ user: 'ann' }), ['old'])
          assert.deepEqual(await ids({ since: '2026-03-01T00:00:00.000Z' }), ['new', 'proj'])
          assert.deepEqual(await ids({ until: '2026-03-01T00:00:00.000Z' }), ['old', 'proj'])
          assert.deepEqual(await ids({ since: '2026-01-01T00:00:00.000Z', until: '2026-04-01T00:00:00.000Z', kinds: ['lesson'] }), ['proj'])
          assert.deepEqual(await ids({ kinds: [] }), [])
        }
      })
    })

    test('remove and removeSource take units out of every channel', async () => {
      await withIndex(async (index) => {
        const v = index.capabilities.vectors ? vec(0, 0, 1, 0) : undefined
        await index.upsert([
          unit('a1', 'apple pie recipe', { source: 'a.md', vector: v }),
          unit('a2', 'apple crumble recipe', { source: 'a.md', vector: v }),
          unit('b1', 'banana bread recipe', { source: 'b.md', vector: v }),
        ])
        assert.deepEqual(await index.sources(), ['a.md', 'b.md'])
        assert.deepEqual(
          await index.hashes('a.md'),
          new Map([
            ['a1', 'h:apple pie recipe'],
            ['a2', 'h:apple crumble recipe'],
          ]),
        )
        assert.equal(await index.removeSource('a.md'), 2)
        assert.equal(await index.removeSource('a.md'), 0)
        assert.deepEqual(await index.sources(), ['b.md'])
        await index.remove(['b1', 'never-there'])
        assert.deepEqual(await index.get(['a1', 'a2', 'b1']), [])
        if (index.capabilities.fullText) assert.deepEqual(await index.search({ text: 'recipe', limit: 5 }), [])
        if (v) assert.deepEqual(await index.search({ vector: v, limit: 5 }), [])
        assert.equal(Object.values(await index.count()).reduce((a, b) => a + b, 0), 0)
      })
    })

    test('recordAccess counts each access and keeps the latest time', () =>
      withIndex(async (index) => {
        await index.upsert([unit('a', 'a'), unit('b', 'b')])
        await index.recordAccess(['a', 'b'], '2026-02-10T00:00:00.000Z')
        await index.recordAccess(['a'], '2026-02-12T00:00:00.000Z')
        await index.recordAccess(['a'], '2026-02-11T00:00:00.000Z')
        await index.recordAccess(['missing'], '2026-02-11T00:00:00.000Z')
        const [a, b] = await index.get(['a', 'b'])
        assert.equal(a?.accessCount, 3)
        assert.equal(a?.lastAccessAt, '2026-02-12T00:00:00.000Z')
        assert.equal(b?.accessCount, 1)
        assert.equal(b?.lastAccessAt, '2026-02-10T00:00:00.000Z')
      }))

    test('raiseAccess raises counts and last access to at least what it is given, never lowers them, and changes nothing twice', () =>
      withIndex(async (index) => {
        if (!index.raiseAccess) return
        await index.upsert([unit('a', 'a'), unit('b', 'b'), unit('c', 'c')])
        await index.recordAccess(['a'], '2026-02-10T00:00:00.000Z')
        await index.recordAccess(['a'], '2026-02-12T00:00:00.000Z')
        const given = [
          { id: 'a', count: 1, lastAccessAt: '2026-02-11T00:00:00.000Z' },
          { id: 'b', count: 4, lastAccessAt: '2026-03-01T09:30:00.000Z' },
          { id: 'c', count: 2 },
          { id: 'missing', count: 3 },
        ]
        assert.equal(await index.raiseAccess(given), 2, 'a holds more already; missing is no unit')
        assert.equal(await index.raiseAccess(given), 0, 'a second time changes nothing')
        const [a, b, c] = await index.get(['a', 'b', 'c'])
        assert.equal(a?.accessCount, 2)
        assert.equal(a?.lastAccessAt, '2026-02-12T00:00:00.000Z')
        assert.equal(b?.accessCount, 4)
        assert.equal(b?.lastAccessAt, '2026-03-01T09:30:00.000Z')
        assert.equal(c?.accessCount, 2)
        assert.equal(c?.lastAccessAt, undefined)
        await index.recordAccess(['b'], '2026-03-02T00:00:00.000Z')
        assert.equal((await index.get(['b']))[0]?.accessCount, 5, 'counting goes on from the raised count')
        await assert.rejects(index.raiseAccess([{ id: 'a', count: -1 }]), { code: 'invalid_argument' })
      }))

    test('count reports every unit kind, zeros included', () =>
      withIndex(async (index) => {
        await index.upsert([unit('m1', 'x', { kind: 'message' }), unit('m2', 'y', { kind: 'message' }), unit('s', 'z', { kind: 'skill' })])
        const counts = await index.count()
        assert.deepEqual(Object.keys(counts).sort(), [...UNIT_KINDS].sort())
        assert.equal(counts.message, 2)
        assert.equal(counts.skill, 1)
        assert.equal(counts.rule, 0)
      }))

    test('purgeUser erases every unit a user owns or that records them, of every agent, and nothing else', () =>
      withIndex(async (index) => {
        await index.upsert([
          unit('m1', 'salary is 120k', { kind: 'message', source: 'conv:1', agent: 'alpha', user: 'ann', owner: 'user:ann', meta: { name: 'Ann' } }),
          unit('k1', 'ann keeps a salary note', { agent: 'beta', owner: 'user:ann', source: 'agents/beta/users/ann/knowledge/x.md' }),
          unit('p1', 'ann profile salary', { kind: 'user', user: 'ann', owner: 'user:ann' }),
          unit('m2', 'salary talk of bob', { kind: 'message', source: 'conv:2', agent: 'alpha', user: 'bob', owner: 'user:bob', meta: { name: 'Bob' } }),
          unit('a1', 'agent salary policy', { agent: 'alpha' }),
          unit('x1', 'user annie salary', { owner: 'user:annie', user: 'annie' }),
        ])
        assert.equal(await index.purgeUser('ann'), 3)
        assert.deepEqual((await index.get(['m1', 'k1', 'p1', 'm2', 'a1', 'x1'])).map((u) => u.id), ['m2', 'a1', 'x1'])
        if (index.capabilities.fullText) {
          const found = (await index.search({ text: 'salary', limit: 10 })).map((hit) => hit.id).sort()
          assert.deepEqual(found, ['a1', 'm2', 'x1'])
          if (index.participants) assert.deepEqual(await index.participants('alpha'), ['Bob'])
        }
        assert.equal(await index.purgeUser('ann'), 0, 'a second purge finds nothing')
      }))

    test('a batch with an invalid unit stores nothing', () =>
      withIndex(async (index) => {
        await rejectsWithCode(index.upsert([unit('ok', 'fine'), unit('bad', 'x', { kind: 'nonsense' as IndexUnit['kind'] })]), 'invalid_argument')
        assert.deepEqual(await index.get(['ok']), [])
      }))
  })
}
