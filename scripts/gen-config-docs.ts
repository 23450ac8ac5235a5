/** Writes docs/configuration.md from the one configuration schema (`npm run engram -- config --docs` prints the same table). */
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { configDocs } from '../src/interfaces/cli/commands/config/index.ts'

const root = resolve(import.meta.dirname, '..')
writeFileSync(join(root, 'docs', 'configuration.md'), configDocs())
console.log('wrote docs/configuration.md')
