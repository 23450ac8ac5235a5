/**
 * `engram/cli`: run the `engram` command line in process (what the `engram` binary runs). Kept
 * out of the root entry so that `import 'engram'` loads the library alone, not every command, the
 * MCP SDK, the HTTP server and the evaluation harness behind them (decision 0041).
 */
export { runCli } from './interfaces/cli/run-cli.ts'
export type { CliIo } from './interfaces/cli/io.ts'
