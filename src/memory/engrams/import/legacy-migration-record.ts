/**
 * The record of the legacy migration on open (legacy-migration.ts): which old-layout folders of
 * the home were migrated, when, and how many lessons came over — `state/legacy-migration.json` in
 * the agent's folder, read by the migration and by `engram status`. Kept apart so `engram status`
 * reads it without loading the importer (decision 0041).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { HomeLayout } from '../../../storage/home-layout.ts'

/** One old-layout folder: `started` until every lesson is in, then `done` with the counts. */
export interface LegacyMigrationRecord {
  status: 'started' | 'done'
  at: string
  lessons?: number
  duplicates?: number
}

export function legacyRecordPath(layout: HomeLayout): string {
  return join(layout.stateDir, 'legacy-migration.json')
}

/** The record, by folder (absolute); empty when nothing was migrated or the file cannot be read (the migration then redoes its work). */
export async function readLegacyRecord(layout: HomeLayout): Promise<Record<string, LegacyMigrationRecord>> {
  const text = await readFile(legacyRecordPath(layout), 'utf8').catch(() => undefined)
  if (text === undefined) return {}
  try {
    const value = JSON.parse(text) as unknown
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, LegacyMigrationRecord>) : {}
  } catch {
    return {}
  }
}
