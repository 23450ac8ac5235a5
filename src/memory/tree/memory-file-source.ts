/**
 * Where `read_memory_file`, `write_memory_file` and the MCP resources find what a memory path
 * names. On the embedded backend memory is files of the home, read where they are (confined by
 * `confine()`); on any other backend memory is rows, and the same paths are answered through the
 * storage seams (memory-seam-source.ts), rendered as the export renders them — so the agent sees
 * one namespace whichever backend holds its memory.
 */
import { readdir, readFile, stat } from 'node:fs/promises'
import type { Backend } from '../../storage/contracts.ts'
import type { HomeLayout } from '../../storage/home-layout.ts'
import { confine, type MemoryLocation } from './memory-paths.ts'
import { seamMemorySource } from './memory-seam-source.ts'

/** What is at a memory location. */
export type OpenedMemory =
  | { kind: 'file'; size: number; read(): Promise<Buffer> }
  | { kind: 'folder' }
  /** Something that is neither a regular file nor a folder (a pipe, a socket). */
  | { kind: 'special' }
  | { kind: 'missing' }

export interface MemoryFileSource {
  /** Whether the backend's memory is files of the home (true) or read through the seams. */
  readonly files: boolean
  /** What is at `location`; throws `path_outside_memory` for a link leading out. */
  open(location: MemoryLocation): Promise<OpenedMemory>
  /** The names in the folder at `location` (folders end with `/`), sorted; `[]` when there is none. */
  entries(location: MemoryLocation): Promise<string[]>
}

/** The names in a folder of the home (folders end with `/`, hidden names left out), sorted. */
async function folderEntries(dir: string): Promise<string[]> {
  let entries: import('node:fs').Dirent[]
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const names: string[] = []
  for (const entry of entries.filter((e) => !e.name.startsWith('.')).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory()) names.push(`${entry.name}/`)
    else if (entry.isFile() || entry.isSymbolicLink()) names.push(entry.name)
  }
  return names
}

/** Memory as files of the home (the embedded backend; skills on every backend). */
function homeFileSource(): MemoryFileSource {
  return {
    files: true,
    async open(location) {
      const real = await confine(location)
      if (real === null) return { kind: 'missing' }
      const info = await stat(real)
      if (info.isDirectory()) return { kind: 'folder' }
      if (!info.isFile()) return { kind: 'special' }
      return { kind: 'file', size: info.size, read: () => readFile(real) }
    },
    entries: (location) => folderEntries(location.absolute),
  }
}

/** The source for a mind's backend: the home's files when its memory is files (or none is given), its seams when it is rows. */
export function memoryFileSource(layout: HomeLayout, backend?: Backend): MemoryFileSource {
  if (backend === undefined || backend.capabilities.memory === 'files') return homeFileSource()
  return seamMemorySource(layout, backend, homeFileSource())
}
