import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { makeTempHome } from '../../testing/temp-home.ts'
import type { IndexUnit, UnitKind } from '../contracts.ts'
import { openSqlite, type SqliteHandle } from './database.ts'
import { createSqliteSearchIndex } from './search-index.ts'

function tempDatabase(name = 'engram.db') {
  const temp = makeTempHome('engram-sqlite-index-')
  mkdirSync(temp.home, { recursive: true })
  const path = join(temp.home, name)
  const handles: SqliteHandle[] = []
  return {
    path,
    open(options: { readOnly?: boolean } = {}) {
      const handle = openSqlite(path, options)
      handles.push(handle)
      return handle
    },
    cleanup() {
      for (const handle of handles) handle.close()
      temp.cleanup()
    },
  }
}

const probe = openSqlite(':memory:')
const hasSqliteVec = probe.features.sqliteVec !== false
probe.close()

describe('query text with FTS5 syntax in it', () => {
  test('nasty queries run against a real FTS5 table without throwing', async () => {
    const db = tempDatabase()
    try {
      const index = createSqliteSearchIndex(db.open())
      await index.upsert([
        { id: 'a', kind: 'lesson', text: 'Use "git rebase -i" (carefully) with café au lait', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'a' },
      ])
      const nasty = ['"git rebase -i"', 'rebase*', 'NEAR(git rebase, 2)', '-i', '(carefully)', ')(', '""""', "O'Reilly", 'a\u0000b', '🙂', 'cafe']
      for (const text of nasty) await index.search({ text, limit: 3 })
      assert.deepEqual(
        (await index.search({ text: 'cafe', limit: 3 })).map((h) => h.id),
        ['a'],
        'diacritics removed',
      )
      assert.deepEqual(
        (await index.search({ text: 'rebasing', limit: 3 })).map((h) => h.id),
        ['a'],
        'porter stemming',
      )
    } finally {
      db.cleanup()
    }
  })
})

/** A deterministic pseudo-random generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0
    return state / 2 ** 32
  }
}

function randomUnits(count: number, dims: number, seed: number): IndexUnit[] {
  const next = random(seed)
  const kinds: UnitKind[] = ['message', 'lesson', 'knowledge', 'episode']
  return Array.from({ length: count }, (_, i) => ({
    id: `u${i}`,
    kind: kinds[i % kinds.length]!,
    text: `unit ${i}`,
    source: `src/${i % 7}.md`,
    provenance: [],
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString(),
    hash: `h${i}`,
    vector: Float32Array.from({ length: dims }, () => next() * 2 - 1),
  }))
}

describe('vector backends', { skip: hasSqliteVec ? false : 'sqlite-vec not loadable here' }, () => {
  test('sqlite-vec and the TypeScript fallback find the same nearest neighbours, with and without filters', async () => {
    const vecDb = tempDatabase()
    const tsDb = tempDatabase()
    try {
      const vecIndex = createSqliteSearchIndex(vecDb.open(), { vectorBackend: 'sqlite-vec' })
      const tsIndex = createSqliteSearchIndex(tsDb.open(), { vectorBackend: 'typescript' })
      assert.equal(vecIndex.capabilities.vectors, 'sqlite-vec')
      assert.equal(tsIndex.capabilities.vectors, 'typescript')
      // More units than one sqlite-vec KNN may return (4096), so the broad-filter paths run too.
      const units = randomUnits(5000, 16, 7)
      await vecIndex.upsert(units)
      await tsIndex.upsert(units)
      const next = random(99)
      const filters = [
        {},
        { kinds: ['lesson' as const] },
        { sources: ['src/3.md'] },
        { since: '2026-03-01T00:00:00.000Z', kinds: ['message' as const, 'episode' as const] },
        { kinds: ['message' as const], until: '2026-01-02T00:00:00.000Z' },
        // Broad: more allowed units than one KNN query returns, so vec0 is over-fetched.
        { since: '2026-01-01T00:00:00.000Z' },
      ]
      for (let q = 0; q < 6; q++) {
        const vector = Float32Array.from({ length: 16 }, () => next() * 2 - 1)
        for (const filter of filters) {
          const fromVec = await vecIndex.search({ vector, limit: 10, ...filter })
          const fromTs = await tsIndex.search({ vector, limit: 10, ...filter })
          assert.deepEqual(
            fromVec.map((h) => h.id),
            fromTs.map((h) => h.id),
            `query ${q}, filter ${JSON.stringify(filter)}`,
          )
          for (const [i, hit] of fromVec.entries()) assert.ok(Math.abs(hit.dense! - fromTs[i]!.dense!) < 1e-5)
        }
      }
    } finally {
      vecDb.cleanup()
      tsDb.cleanup()
    }
  })

  test('a broad filter whose units are all far from the query still gets its true nearest', async () => {
    const vecDb = tempDatabase()
    const tsDb = tempDatabase()
    try {
      const vecIndex = createSqliteSearchIndex(vecDb.open(), { vectorBackend: 'sqlite-vec' })
      const tsIndex = createSqliteSearchIndex(tsDb.open(), { vectorBackend: 'typescript' })
      // 4200 messages near the query hide every lesson from the 4096 nearest, and there are more
      // lessons than one KNN can take as a rowid list: only the chunked search can answer.
      const next = random(3)
      const units: IndexUnit[] = Array.from({ length: 8400 }, (_, i) => {
        const near = i % 2 === 0
        return {
          id: `u${i}`,
          kind: near ? 'message' : 'lesson',
          text: `unit ${i}`,
          source: 's',
          provenance: [],
          createdAt: '2026-01-01T00:00:00.000Z',
          hash: `h${i}`,
          vector: Float32Array.from([near ? 1 : -1, next() * 0.5, next() * 0.5, next() * 0.5]),
        }
      })
      await vecIndex.upsert(units)
      await tsIndex.upsert(units)
      const query = { vector: new Float32Array([1, 0.1, 0.2, 0]), kinds: ['lesson' as const], limit: 5 }
      const fromVec = await vecIndex.search(query)
      const fromTs = await tsIndex.search(query)
      assert.equal(fromVec.length, 5)
      assert.deepEqual(
        fromVec.map((h) => h.id),
        fromTs.map((h) => h.id),
      )
    } finally {
      vecDb.cleanup()
      tsDb.cleanup()
    }
  })
})

describe('vectors belong to one embedder', () => {
  test('opening with another embedder drops vectors and blanks the hashes of the units that had one', async () => {
    const db = tempDatabase()
    try {
      const first = createSqliteSearchIndex(db.open(), { embedderId: 'model-a' })
      await first.upsert([
        { id: 'v', kind: 'knowledge', text: 'with vector', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'hv', vector: new Float32Array([1, 0, 0]) },
        { id: 'p', kind: 'knowledge', text: 'plain', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'hp' },
      ])
      const same = createSqliteSearchIndex(db.open(), { embedderId: 'model-a' })
      assert.deepEqual(await same.hashes('s'), new Map([['v', 'hv'], ['p', 'hp']]), 'same embedder: nothing changes')

      const second = createSqliteSearchIndex(db.open(), { embedderId: 'model-b' })
      assert.deepEqual(await second.hashes('s'), new Map([['v', ''], ['p', 'hp']]))
      assert.deepEqual(await second.search({ vector: new Float32Array([1, 0, 0]), limit: 5 }), [])
      // The new model may have another size: the dimensions were forgotten with the vectors.
      await second.upsert([
        { id: 'v', kind: 'knowledge', text: 'with vector', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'hv', vector: new Float32Array([0, 1]) },
      ])
      assert.deepEqual(
        (await second.search({ vector: new Float32Array([0, 1]), limit: 5 })).map((h) => h.id),
        ['v'],
      )
    } finally {
      db.cleanup()
    }
  })

  test('switching the vector backend drops vectors the same way', { skip: hasSqliteVec ? false : 'sqlite-vec not loadable here' }, async () => {
    const db = tempDatabase()
    try {
      const withVec = createSqliteSearchIndex(db.open(), { vectorBackend: 'sqlite-vec' })
      await withVec.upsert([
        { id: 'v', kind: 'knowledge', text: 'x', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'h', vector: new Float32Array([1, 0]) },
      ])
      const withTs = createSqliteSearchIndex(db.open(), { vectorBackend: 'typescript' })
      assert.deepEqual(await withTs.hashes('s'), new Map([['v', '']]))
      assert.deepEqual(await withTs.search({ vector: new Float32Array([1, 0]), limit: 5 }), [])
      const tables = db.open().db.prepare("SELECT name FROM sqlite_schema WHERE name = 'index_vec'").all()
      assert.deepEqual(tables, [], 'the vec0 table was dropped')
    } finally {
      db.cleanup()
    }
  })

  test('a vector of other dimensions than `dimensions` is refused before any is stored', async () => {
    const db = tempDatabase()
    try {
      const index = createSqliteSearchIndex(db.open(), { dimensions: 3 })
      await assert.rejects(
        index.upsert([
          { id: 'v', kind: 'knowledge', text: 'x', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'h', vector: new Float32Array([1, 0]) },
        ]),
        { code: 'invalid_argument' },
      )
    } finally {
      db.cleanup()
    }
  })
})

test('the FTS5 table is rebuilt from index_units when it is missing', async () => {
  const db = tempDatabase()
  try {
    const handle = db.open()
    await createSqliteSearchIndex(handle).upsert([
      { id: 'a', kind: 'rule', text: 'never push on friday', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'h' },
    ])
    handle.db.exec('DROP TABLE index_fts')
    const index = createSqliteSearchIndex(handle)
    assert.deepEqual(
      (await index.search({ text: 'friday', limit: 3 })).map((h) => h.id),
      ['a'],
    )
  } finally {
    db.cleanup()
  }
})

test('a read-only handle searches but does not create or migrate anything', async () => {
  const db = tempDatabase()
  try {
    await createSqliteSearchIndex(db.open()).upsert([
      { id: 'a', kind: 'rule', text: 'always write tests', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'h' },
    ])
    const reader = createSqliteSearchIndex(db.open({ readOnly: true }))
    assert.deepEqual(
      (await reader.search({ text: 'tests', limit: 3 })).map((h) => h.id),
      ['a'],
    )
    await assert.rejects(reader.upsert([{ id: 'b', kind: 'rule', text: 'x', source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: 'h' }]))
  } finally {
    db.cleanup()
  }
})

test('access is counted at once, written in one batch, and kept across a restart', async () => {
  const db = tempDatabase()
  const count = (handle: SqliteHandle, id: string) => handle.db.prepare('SELECT access_count AS n, last_access_at AS at FROM index_units WHERE id = ?').get(id) as { n: number; at: string | null }
  try {
    const writer = db.open()
    const index = createSqliteSearchIndex(writer)
    const unit = (id: string): IndexUnit => ({ id, kind: 'rule', text: `rule ${id} about deploys`, source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: id })
    await index.upsert([unit('a'), unit('b')])
    const other = db.open({ readOnly: true })

    await index.recordAccess(['a', 'b'], '2026-02-01T10:00:00Z')
    await index.recordAccess(['a', 'a'], '2026-02-03T10:00:00Z')
    // An older access arriving late does not make the memory look staler.
    await index.recordAccess(['a'], '2026-01-15T10:00:00Z')
    // This process sees every recall at once, through get() and through search().
    const [a, b] = await index.get(['a', 'b'])
    assert.equal(a?.accessCount, 3)
    assert.equal(a?.lastAccessAt, '2026-02-03T10:00:00.000Z')
    assert.equal(b?.accessCount, 1)
    const hit = (await index.search({ text: 'deploys', limit: 5 })).find((c) => c.id === 'a')
    assert.equal(hit?.unit?.accessCount, 3)
    // Not yet on disk for another connection; flush() writes it.
    assert.equal(count(other, 'a').n, 0)
    await index.flush?.()
    assert.deepEqual({ ...count(other, 'a') }, { n: 3, at: '2026-02-03T10:00:00.000Z' })
    assert.equal((await index.get(['a']))[0]?.accessCount, 3, 'nothing counted twice after the flush')

    // Within a second, a timer writes on its own.
    await index.recordAccess(['b'], '2026-02-04T10:00:00Z')
    const deadline = Date.now() + 5_000
    while (count(other, 'b').n !== 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(count(other, 'b').n, 2)

    // A reopened index reads what was written.
    const reopened = createSqliteSearchIndex(db.open())
    assert.deepEqual((await reopened.get(['a', 'b'])).map((u) => u.accessCount), [3, 2])
  } finally {
    db.cleanup()
  }
})

test('the stamp of a kind changes when a unit of that kind is added, changed or removed, here or by another connection, and only then', async () => {
  const db = tempDatabase()
  try {
    const index = createSqliteSearchIndex(db.open())
    const other = createSqliteSearchIndex(db.open())
    const unit = (id: string, kind: UnitKind, text: string): IndexUnit => ({ id, kind, text, source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: `${id}:${text}` })
    const stamp = () => (index.stamp as NonNullable<typeof index.stamp>)(['rule'])
    const listed = async () => (await index.list({ kinds: ['rule'] }, { limit: 10 })).map((u) => `${u.id}:${u.text}`)
    const first = await stamp()
    await index.upsert([unit('r1', 'rule', 'Always answer in French.')])
    const afterRule = await stamp()
    assert.notEqual(afterRule, first, 'a rule added here')
    // What a turn writes besides rules: a message, and its previous message written again as it is.
    await index.upsert([unit('m1', 'message', 'hello there')])
    await index.upsert([unit('m1', 'message', 'hello there'), unit('r1', 'rule', 'Always answer in French.')])
    await index.recordAccess(['r1'], '2026-01-02T00:00:00Z')
    await index.flush?.()
    assert.equal(await stamp(), afterRule, 'no rule changed: a reader keeps what it listed')
    assert.deepEqual(await listed(), ['r1:Always answer in French.'])
    const changes: Array<[string, () => Promise<unknown>, string[]]> = [
      ['a rule changed here', () => index.upsert([unit('r1', 'rule', 'Always answer in German.')]), ['r1:Always answer in German.']],
      ['a message that became a rule', () => index.upsert([unit('m1', 'rule', 'hello there')]), ['r1:Always answer in German.', 'm1:hello there']],
      ['a rule that became a message', () => index.upsert([unit('m1', 'message', 'hello there')]), ['r1:Always answer in German.']],
      ['a rule added by another connection', () => other.upsert([unit('r2', 'rule', 'Never use emoji.')]), ['r1:Always answer in German.', 'r2:Never use emoji.']],
      ['a rule removed here', () => index.remove(['r2']), ['r1:Always answer in German.']],
      ['a source removed by another connection', () => other.removeSource('s'), []],
    ]
    for (const [what, change, after] of changes) {
      const before = await stamp()
      await change()
      assert.notEqual(await stamp(), before, what)
      assert.deepEqual(await listed(), after, what)
    }
  } finally {
    db.cleanup()
  }
})

test('search plans use the FTS index and unit indexes, not full scans', () => {
  const db = tempDatabase()
  try {
    const handle = db.open()
    createSqliteSearchIndex(handle)
    const plan = (sql: string, ...params: Array<string | number>) =>
      (handle.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((row) => row.detail).join('\n')
    const lexical = plan(
      `SELECT u.id FROM index_fts JOIN index_units u ON u.rowid = index_fts.rowid
       WHERE index_fts MATCH ? AND u.kind IN (SELECT value FROM json_each(?)) ORDER BY bm25(index_fts) LIMIT 10`,
      '"x"',
      '["rule"]',
    )
    assert.match(lexical, /VIRTUAL TABLE INDEX/)
    assert.doesNotMatch(lexical, /SCAN u\b/)
    const filtered = plan(
      'SELECT u.rowid FROM index_units u WHERE u.has_vector = 1 AND u.kind IN (SELECT value FROM json_each(?)) AND u.created_at >= ?',
      '["rule"]',
      '2026-01-01T00:00:00.000Z',
    )
    assert.match(filtered, /USING INDEX/)
  } finally {
    db.cleanup()
  }
})

test('the vocabulary and unit counts, kept between reads, are always what a fresh read of the index finds', async () => {
  const db = tempDatabase()
  try {
    const index = createSqliteSearchIndex(db.open())
    const other = createSqliteSearchIndex(db.open())
    const unit = (id: string, text: string): IndexUnit => ({ id, kind: 'knowledge', text, source: `s${id}`, provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: `h${id}${text}` })
    const fresh = async (): Promise<string[]> => {
      const reader = createSqliteSearchIndex(db.open({ readOnly: true })) as ReturnType<typeof createSqliteSearchIndex> & { vocabulary(): Promise<Set<string>> }
      return [...(await reader.vocabulary())].sort()
    }
    const vocabulary = async (): Promise<string[]> => [...(await (index as typeof index & { vocabulary(): Promise<Set<string>> }).vocabulary())].sort()
    // Each read checks the unit counts against a fresh read as well.
    const kept = async (): Promise<string[]> => {
      assert.deepEqual(await index.count(), await createSqliteSearchIndex(db.open({ readOnly: true })).count())
      return vocabulary()
    }
    await index.upsert([unit('a', 'Sailing boats in the harbour')])
    assert.deepEqual(await kept(), await fresh())
    assert.equal((await index.count()).knowledge, 1)
    // Added here: the new words join (as FTS5 folds them: "Café" is "cafe").
    await index.upsert([unit('b', 'Zanzibar Café lanterns')])
    assert.ok((await kept()).includes('zanzibar') && (await kept()).includes('cafe'))
    assert.deepEqual(await kept(), await fresh())
    // Replaced and removed here: the words only they held leave.
    await index.upsert([unit('b', 'quiet evening')])
    assert.equal((await kept()).includes('zanzibar'), false)
    assert.deepEqual(await kept(), await fresh())
    await index.remove(['a'])
    assert.equal((await kept()).includes('harbour'), false)
    assert.deepEqual(await kept(), await fresh())
    // Written by another connection: seen too.
    await other.upsert([unit('c', 'glacier expedition')])
    assert.ok((await kept()).includes('glacier'))
    assert.deepEqual(await kept(), await fresh())
    await index.upsert([{ ...unit('d', 'a rule of the sea'), kind: 'rule' }])
    assert.deepEqual(await kept(), await fresh())
    assert.deepEqual([(await index.count()).knowledge, (await index.count()).rule], [2, 1])
    // Written again as it is (a message whose neighbours changed), and twice in one batch: counted once.
    await index.upsert([unit('c', 'glacier expedition'), unit('e', 'polar night'), unit('e', 'polar night')])
    assert.deepEqual(await kept(), await fresh())
    assert.equal((await index.count()).knowledge, 3)
    // The same text as another kind: the counts move.
    await index.upsert([{ ...unit('e', 'polar night'), kind: 'rule' }])
    assert.deepEqual(await kept(), await fresh())
    assert.deepEqual([(await index.count()).knowledge, (await index.count()).rule], [2, 2])
    // Replaced with another kind, in a batch that also adds a unit and names it twice (the counts
    // are kept, not read again, as each turn replaces its previous message's unit).
    await index.upsert([{ ...unit('d', 'a lesson of the sea'), kind: 'lesson' }, unit('e', 'new knowledge'), { ...unit('e', 'newer knowledge'), kind: 'topic' }])
    assert.deepEqual(await kept(), await fresh())
    const counts = await index.count()
    assert.deepEqual([counts.knowledge, counts.rule, counts.lesson, counts.topic], [2, 0, 1, 1])
  } finally {
    db.cleanup()
  }
})
