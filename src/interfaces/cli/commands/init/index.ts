import { existsSync } from 'node:fs'
import type { Command } from '../../command.ts'
import { table } from '../../format.ts'
import { withMind } from '../../open-mind.ts'

export const initCommand: Command = {
  path: ['init'],
  examples: ['engram init', 'engram init --home ~/agents/engram --agent support'],
  home: 'creates',
  async run(context) {
    return withMind(context, async (mind) => {
      const layout = mind.layout
      const existed = existsSync(layout.database)
      const data = {
        home: layout.home,
        agent: layout.agent,
        created: !existed,
        database: layout.database,
        folders: {
          memory: layout.globalMemoryDir,
          knowledge: layout.knowledgeDir,
          procedures: layout.proceduresDir,
          skills: layout.skillsDir,
          episodes: layout.episodesDir,
          activity: layout.activityDir,
          users: layout.sharedUsersDir,
        },
        project: layout.projectMemoryDir,
      }
      const human = `${existed ? 'engram home is ready' : 'engram home created'}: ${layout.home} (agent "${layout.agent}")\n${table(
        Object.entries(data.folders).map(([k, v]) => [k, v]),
      )}`
      return { data, human }
    })
  },
}
