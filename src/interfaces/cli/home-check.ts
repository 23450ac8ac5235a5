/**
 * A command that only reads (or changes memory that must already be there) does not create an
 * engram home: opening a mind makes the home's folders and database, so `engram status --home
 * /mnt/typo` would make a new empty home and report it (decision 0074). Such a command asks
 * first, here, and refuses with how to make one.
 */
import { existsSync } from 'node:fs'
import { resolveConfig } from '../../config/resolve.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { CliIo } from './io.ts'

/**
 * The refusal for a home that does not exist, or undefined when there is one to open. With
 * `storage.url` (PostgreSQL) the memory is the database and the folder is made when something is
 * first kept there (a skill, a reply journal), so only the embedded home is checked. The
 * configuration is resolved as opening would resolve it; its problems are thrown as they would be.
 */
export function missingHome(io: Pick<CliIo, 'env'>, settings: Record<string, unknown>): EngramError | undefined {
  const config = resolveConfig({ env: io.env, flags: settings })
  if (config.values.storage.url !== undefined || existsSync(config.values.home)) return undefined
  const home = config.values.home
  return new EngramError({
    code: ErrorCode.notFound,
    category: 'user',
    message: `There is no engram home at ${home} (${config.sources.home === 'default' ? 'the default, ~/.engram' : `from ${config.sources.home === 'env' ? 'ENGRAM_HOME' : '--home'}`}); nothing was created.`,
    fix: `create one with \`engram init --home ${home}\` (or by saving a memory: \`engram remember\`, \`engram memories add\`, \`engram import\`), or point --home / ENGRAM_HOME at an existing home`,
    details: { home },
  })
}
