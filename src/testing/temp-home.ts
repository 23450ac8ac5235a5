/**
 * Hermetic temp folders for tests: each test gets its own engram home and its own `HOME`, so
 * nothing touches `~/.engram`. Exported at `engram/test` for users' own tests.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TempHome {
  /** The engram home folder (empty). */
  home: string
  /** A project folder beside it (empty), for project-scope memory. */
  project: string
  /**
   * An environment with HOME redirected into the temp folder and no ENGRAM_* variables but one:
   * `ENGRAM_EMBED_MODEL=hash-v1`, the small built-in embedder, so that each test's mind does not
   * load the 136 MB of GloVe vectors the default offline embedder uses. Tests of the default drop it.
   */
  env: Record<string, string>
  /** Remove everything. Safe to call twice. */
  cleanup(): void
}

export function makeTempHome(prefix = 'engram-test-'): TempHome {
  const root = mkdtempSync(join(tmpdir(), prefix))
  const env: Record<string, string> = { HOME: join(root, 'user-home'), PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' }
  return {
    home: join(root, 'home'),
    project: join(root, 'project'),
    env,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}
