/**
 * Where derived lexical resources (the WordNet hypernym map, the int8 GloVe file) are cached: built
 * once from an installed package, then read on every later start. `node_modules/.cache/engram`
 * when it is writable (the convention of build tools: it goes away with node_modules), else the OS
 * temporary folder. Files are written to a temporary name and renamed, so a process killed halfway
 * never leaves a truncated cache that a later start would trust.
 */
import { accessSync, constants, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

let resolved: string | undefined

function writable(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true })
    accessSync(dir, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** The folder of `node_modules` that holds `packageName`, or undefined when it is not installed. */
export function packageFolder(packageName: string): string | undefined {
  try {
    const url = import.meta.resolve(`${packageName}/package.json`)
    return dirname(fileURLToPath(url))
  } catch {
    return undefined
  }
}

/** The cache folder (created on first use). `ENGRAM_RESOURCE_CACHE` overrides it. */
export function resourceCacheDir(): string {
  if (resolved !== undefined) return resolved
  const override = process.env.ENGRAM_RESOURCE_CACHE
  const candidates: string[] = []
  if (override) candidates.push(override)
  const anchor = packageFolder('stemmer')
  if (anchor) candidates.push(join(dirname(anchor), '.cache', 'engram'))
  candidates.push(join(tmpdir(), 'engram-cache'))
  for (const dir of candidates) {
    if (writable(dir)) {
      resolved = dir
      return dir
    }
  }
  resolved = candidates[candidates.length - 1] as string
  return resolved
}

/** Path of a cache file by name. */
export function cachePath(name: string): string {
  return join(resourceCacheDir(), name)
}

/** Is the cache file there? */
export function cached(name: string): boolean {
  return existsSync(cachePath(name))
}

/** Write a cache file atomically (temp name, then rename). Errors are the caller's: a failed write only costs a rebuild next time. */
export function writeCache(name: string, data: string | NodeJS.ArrayBufferView): string {
  const path = cachePath(name)
  const temp = `${path}.${process.pid}.tmp`
  writeFileSync(temp, data)
  renameSync(temp, path)
  return path
}
