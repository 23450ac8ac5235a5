/** Docs generated from code stay in step with it. */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { configDocs } from '../src/interfaces/cli/commands/config/index.ts'

const root = resolve(import.meta.dirname, '..')

test('docs/configuration.md is the table generated from the schema (run `npm run docs` after changing a setting)', () => {
  assert.equal(readFileSync(join(root, 'docs', 'configuration.md'), 'utf8'), configDocs())
})

test('the README quick start is exactly the two commands', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const quickStart = /## Quick start\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1]
  assert.equal(quickStart, 'npm run demo\nnpm test\n')
})
