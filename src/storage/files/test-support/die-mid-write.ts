/**
 * Child process for the temp-file tests and the contention bench: the state a writer killed
 * between its temp file and the rename leaves. It starts an atomic write of `<path>` the way
 * `writeFileAtomic` does (same temp name: its pid, this host), writes half of it, says so on
 * stdout, and waits to be killed.
 * Usage: node die-mid-write.ts <path>
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { tempPathFor } from '../../atomic-write.ts'

const [path] = process.argv.slice(2)
if (!path) throw new Error('usage: die-mid-write.ts <path>')
mkdirSync(dirname(path), { recursive: true })
writeFileSync(tempPathFor(path), '# Rules\n\n## Always\n- half a wri')
process.stdout.write('written\n')
setInterval(() => {}, 60_000)
