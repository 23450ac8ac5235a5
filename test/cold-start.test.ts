/**
 * A fresh process's first turn pays only for what it uses (decision 0082): `createMind` →
 * `mind.session(id, { user })` → `begin` counts its tokens over the shipped o200k ranks (never
 * gpt-tokenizer's tables, whose counts are the same but cost 200–450 ms to build), and loads no
 * consolidation and no fact extraction, which run later in the background. Checked in a child
 * process that records every module it loads.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { test } from 'node:test'
import { makeTempHome } from '../src/testing/temp-home.ts'

const root = resolve(import.meta.dirname, '..')

test('a fresh process’s first begin counts tokens over the shipped ranks and loads no consolidation or fact extraction', (t) => {
  const temp = makeTempHome('engram-cold-start-')
  t.after(() => temp.cleanup())
  mkdirSync(temp.home, { recursive: true })
  const child = `
    import { registerHooks } from 'node:module'
    const loaded = []
    registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context) } })
    const { createMind } = await import(${JSON.stringify(pathToFileURL(join(root, 'src/index.ts')).href)})
    const mind = await createMind({ home: ${JSON.stringify(temp.home)}, env: ${JSON.stringify(temp.env)} })
    const session = mind.session('first', { user: 'ada' })
    const turn = await session.begin('We always deploy on Tuesdays; what did we decide about the staging cache?')
    await session.end(turn, 'Noted: deploys on Tuesdays.')
    await mind.close()
    process.stdout.write(JSON.stringify({ loaded, tokens: turn.budgets.context.tokens }))
  `
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', child], { cwd: root, env: temp.env, encoding: 'utf8' })) as { loaded: string[]; tokens: number }
  assert.ok(out.tokens > 0, 'the turn counted the tokens of its context')
  const own = out.loaded.filter((url) => url.startsWith(pathToFileURL(root).href))
  assert.ok(own.some((url) => url.endsWith('/src/core/o200k-table.ts')))
  assert.deepEqual(
    out.loaded.filter((url) => /gpt-tokenizer\/.*(bpeRanks|encoding)\//.test(url)),
    [],
    'gpt-tokenizer’s tables were loaded',
  )
  // The offline rules of extraction/rules.ts are on the path: a user message's standing instructions are
  // indexed when it is stored (decision 0079). The fact extraction pipeline (extract.ts) is not.
  assert.deepEqual(
    own.filter((url) => /\/src\/memory\/(consolidation\/(?!schedule\.ts|episode-compression\.ts|history\.ts)|extraction\/extract\.ts)/.test(url)).map((url) => url.slice(pathToFileURL(root).href.length)),
    [],
  )
})

test('the engram command keeps its compiled code in the user’s cache folder, or where NODE_COMPILE_CACHE says; a folder it cannot write changes nothing', (t) => {
  const temp = makeTempHome('engram-compile-cache-')
  t.after(() => temp.cleanup())
  const bin = join(root, 'src/interfaces/cli/bin.ts')
  const { NODE_COMPILE_CACHE: _shared, ...env } = temp.env
  const cached = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).flatMap((version) => readdirSync(join(dir, version))) : [])
  const help = (extra: Record<string, string>): string => execFileSync(process.execPath, [bin, '--help'], { cwd: root, env: { ...env, ...extra }, encoding: 'utf8' })

  // XDG_CACHE_HOME, else ~/.cache (macOS and Windows have their own folders).
  const xdg = join(temp.home, '..', 'xdg-cache')
  assert.match(help({ XDG_CACHE_HOME: xdg }), /Usage/)
  assert.ok(cached(join(xdg, 'engram', 'node-compile-cache')).length > 0, 'compiled code kept under XDG_CACHE_HOME/engram')
  if (process.platform === 'linux') {
    help({})
    assert.ok(cached(join(env.HOME as string, '.cache', 'engram', 'node-compile-cache')).length > 0, 'compiled code kept under ~/.cache/engram')
  }
  // NODE_COMPILE_CACHE wins, as Node's own setting.
  const chosen = join(temp.home, '..', 'chosen-cache')
  const elsewhere = join(temp.home, '..', 'unused-xdg')
  help({ NODE_COMPILE_CACHE: chosen, XDG_CACHE_HOME: elsewhere })
  assert.ok(cached(chosen).length > 0)
  assert.equal(existsSync(elsewhere), false)
  // A cache folder that cannot be made (a file is in the way): the command runs as before, without the cache.
  const blocked = join(temp.home, '..', 'a-file')
  writeFileSync(blocked, 'not a folder\n')
  assert.match(help({ XDG_CACHE_HOME: blocked }), /Usage/)
})
