/**
 * Forgetting on request by what a caller names (decision 0023): the one place the agent tool, the
 * CLI and `mind.forget()` / `mind.restore()` go through, so that who may forget what, and how a
 * target is read, never differ between them.
 */
import { join } from 'node:path'
import type { Clock } from '../core/clock.ts'
import type { Viewer } from '../core/owner.ts'
import { type ForgetOutcome, forgetMemory, purgeMemory, restoreMemory } from '../memory/forgetting/forget-memory.ts'
import type { Mind } from '../mind.ts'
import type { ActivityLog, Backend, Locks } from '../storage/contracts.ts'
import { createFileLocks } from '../storage/files/locks.ts'
import type { HomeLayout } from '../storage/home-layout.ts'
import { resolveForgetTarget } from './forget-targets.ts'

/** What forgetting works with, for one viewer. */
export interface ForgettingContext {
  backend: Backend
  layout: HomeLayout
  /** The open project's locks, under which its memory files are written. */
  projectLocks?: Locks
  clock: Clock
  /** Who asks: a session's (agent, user), or the agent's own view. */
  viewer: Viewer
  /** The viewer's own activity log: every act is recorded there. */
  log: ActivityLog
  /** Waits for index writes already under way (so none of them puts a forgotten unit back). */
  indexed(): Promise<void>
  reindex(): Promise<unknown>
}

/** The forgetting context of one viewer of a mind: `user`'s session, or the agent's own view. */
export function forgettingContextOf(mind: Mind, user?: string): ForgettingContext {
  const scope = mind.scope(user)
  const projectDir = mind.layout.projectMemoryDir
  return {
    backend: mind.backend,
    layout: mind.layout,
    // The folder openEmbeddedBackend gives the project's engram stores.
    ...(projectDir ? { projectLocks: createFileLocks({ dir: join(projectDir, '..', '.locks') }) } : {}),
    clock: mind.clock,
    viewer: scope.viewer,
    log: scope.view.own.activity,
    indexed: () => mind.indexed(),
    reindex: () => mind.reindex(),
  }
}

/** Moves the memory `target` names to `archive/forgotten/` and out of the index. */
export async function forgetTarget(context: ForgettingContext, target: string, options: { reason?: string } = {}): Promise<ForgetOutcome> {
  await context.indexed()
  const memory = await resolveForgetTarget(context, target, 'live')
  return forgetMemory(context, memory, options)
}

/** Brings a forgotten memory back (by its live path, its archived path or its text). */
export async function restoreTarget(context: ForgettingContext, target: string): Promise<ForgetOutcome> {
  const memory = await resolveForgetTarget(context, target, 'archived')
  return restoreMemory(context, memory)
}

/** Deletes the memory `target` names for real, live or forgotten, with its archived copies. */
export async function purgeTarget(context: ForgettingContext, target: string, options: { reason?: string } = {}): Promise<ForgetOutcome> {
  await context.indexed()
  const memory = await resolveForgetTarget(context, target, 'any')
  return purgeMemory(context, memory, options)
}
