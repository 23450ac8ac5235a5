/**
 * Test helper run as a child process: prints this process's journal writer identity as one JSON
 * line, then stays alive until it is killed.
 * Usage: node writer-child.ts [proc root]
 */
import { thisWriter } from '../journal-writer.ts'

process.stdout.write(`${JSON.stringify(thisWriter(process.argv[2]))}\n`)
setInterval(() => {}, 60_000)
