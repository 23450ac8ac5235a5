/**
 * Forgetting on request by what a caller names (decision 0023): the one place the agent tool, the
 * CLI and `mind.forget()` / `mind.restore()` go through, so that who may forget what, and how a
 * target is read, never differ between them.
 */
import type { Clock } from '../core/clock.ts'
import type { Viewer } from '../core/owner.ts'
import { type ForgetOutcome, forgetMemory, purgeMemory, restoreMemory } from '../memory/forgetting/forget-memory.ts'
import type { ActivityLog, Backend } from '../storage/contracts.ts'
import type { HomeLayout } from '../storage/home-layout.ts'
import { resolveForgetTarget } from './forget-targets.ts'
import type { ToolHost } from './tool-host.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { type DocumentHistory, documentHistory } from '../memory/consolidation/history.ts'

/** What forgetting works with, for one viewer. */
export interface ForgettingContext {
  backend: Backend
  layout: HomeLayout
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
export function forgettingContextOf(host: Pick<ToolHost, 'backend' | 'layout' | 'clock' | 'scope' | 'indexed' | 'reindex'>, user?: string): ForgettingContext {
  const scope = host.scope(user)
  return {
    backend: host.backend,
    layout: host.layout,
    clock: host.clock,
    viewer: scope.viewer,
    log: scope.view.own.activity,
    indexed: () => host.indexed(),
    reindex: () => host.reindex(),
  }
}

/** Moves the memory `target` names to `archive/forgotten/` and out of the index. */
export async function forgetTarget(context: ForgettingContext, target: string, options: { reason?: string } = {}): Promise<ForgetOutcome> {
  await context.indexed()
  const memory = await resolveForgetTarget(context, target, 'live')
  return forgetMemory(context, memory, options)
}

/**
 * How a knowledge or procedure document changed and why (consolidation/history.ts), resolved as
 * forgetting resolves a path: the viewer's own, shared or the agent's, never another user's.
 */
export async function historyOfTarget(context: ForgettingContext, target: string): Promise<DocumentHistory> {
  let memory: Awaited<ReturnType<typeof resolveForgetTarget>>
  try {
    memory = await resolveForgetTarget(context, target, 'live')
  } catch (error) {
    if (!EngramError.is(error) || error.code !== ErrorCode.notFound) throw error
    memory = await resolveForgetTarget(context, target, 'archived')
  }
  if (memory.kind !== 'document') {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${target} is an entry or a topic file; a history is kept for knowledge and procedure documents.`,
      fix: 'pass a path such as knowledge/tea.md or procedures/deploy.md (rules, lessons and profile facts keep their forgotten entries in archive/forgotten/)',
    })
  }
  return documentHistory(context, memory.owner, memory.docKind, memory.slug)
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
