/**
 * The dashboard's pages for reading memory: memories by agent, user, kind and scope with their
 * files, frontmatter and history; "why did the agent know that?"; conversations and their summary
 * DAG down to the original messages. Who sees what is the API's rule (decision 0038): a user's
 * token sees that user's view, an administrator may pick any user, an open loopback server shows
 * the agent's own.
 */
import type { Hono } from 'hono'
import type { MindInternals } from '../../../mind-internals.ts'
import type { ServeEnv } from '../support.ts'
import { registerConversationPages } from './browse-conversations.ts'
import { registerMemoryPages } from './browse-memories.ts'
import { registerUserPages } from './browse-user.ts'
import { registerWhyPages } from './browse-why.ts'

export function registerBrowsePages(app: Hono<ServeEnv>, mind: MindInternals): void {
  registerMemoryPages(app, mind)
  registerWhyPages(app, mind)
  registerConversationPages(app, mind)
  registerUserPages(app, mind)
}
