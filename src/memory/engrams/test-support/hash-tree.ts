/** A hash of a folder tree (paths and bytes), to prove an import left its source untouched. */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

export function hashTree(root: string): string {
  const hash = createHash('sha256')
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      const stat = statSync(path)
      hash.update(`${relative(root, path)}\u0000${stat.mode}\u0000${stat.mtimeMs}\u0000`)
      if (stat.isDirectory()) walk(path)
      else hash.update(readFileSync(path))
    }
  }
  walk(root)
  return hash.digest('hex')
}
