import type { OptionSpec } from './command.ts'

/** Options every command accepts. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  home: { type: 'string', description: 'engram home folder (ENGRAM_HOME; default ~/.engram)', valueName: 'DIR' },
  agent: { type: 'string', description: 'agent name (ENGRAM_AGENT; default "default")', valueName: 'NAME' },
  project: { type: 'string', description: 'project folder with project-scope memory (ENGRAM_PROJECT)', valueName: 'DIR' },
  user: { type: 'string', description: 'act for this user: their memory, plus the agent\'s and shared (default: the agent\'s own only)', valueName: 'ID' },
  set: { type: 'string', multiple: true, description: 'any setting, e.g. --set memory.mode=copilot', valueName: 'KEY=VALUE' },
  json: { type: 'boolean', description: 'JSON output (the default when stdout is not a terminal)' },
  human: { type: 'boolean', description: 'human-readable output even when stdout is not a terminal' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
  version: { type: 'boolean', description: 'print the version' },
}
