/**
 * The offline resources engram ships in `resources/` at the package root (decision 0040): the
 * compact word vectors (glove-100d.i8 and glove-100d.words.txt) and the WordNet related-words map
 * (wordnet-related.txt), built by scripts/build-resources.ts from public-domain sources and held
 * to resources/manifest.json by a test. Nothing is converted or cached at run time.
 *
 * The folder sits two levels above this file both in src/ (a clone) and in dist/ (the package).
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const RESOURCES_DIR = new URL('../../resources/', import.meta.url)

/** Absolute path of the shipped resource `name`. */
export function resourcePath(name: string): string {
  return fileURLToPath(new URL(name, RESOURCES_DIR))
}

/** The bytes of the shipped resource `name`, or undefined when it is missing (a damaged install). */
export function readResource(name: string): Buffer | undefined {
  try {
    return readFileSync(resourcePath(name))
  } catch {
    return undefined
  }
}
