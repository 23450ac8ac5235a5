/**
 * Hermetic temp folders for tests: each test gets its own engram home and its own `HOME`, so
 * nothing touches `~/.engram`. Exported at `engram/test` for users' own tests.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
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
   * And NODE_COMPILE_CACHE, one folder for every test of this user: the `engram` command keeps its
   * compiled code in the user's cache folder, which under each test's own HOME would start empty
   * (twice the CPU of a start from compiled code, decision 0082).
   */
  env: Record<string, string>
  /** Remove everything. Safe to call twice. */
  cleanup(): void
}

/** The compile cache the children of every test share (per user: a folder another user made is not written into). */
const SHARED_COMPILE_CACHE = join(tmpdir(), `engram-test-compile-cache-${userInfoId()}`)

function userInfoId(): string {
  try {
    return String(userInfo().uid)
  } catch {
    return 'user'
  }
}

export function makeTempHome(prefix = 'engram-test-'): TempHome {
  const root = mkdtempSync(join(tmpdir(), prefix))
  const env: Record<string, string> = { HOME: join(root, 'user-home'), PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1', NODE_COMPILE_CACHE: SHARED_COMPILE_CACHE }
  return {
    home: join(root, 'home'),
    project: join(root, 'project'),
    env,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}
