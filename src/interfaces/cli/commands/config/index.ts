import type { Command } from '../../command.ts'
import { colourFor, makeStyle } from '../../format.ts'
import { missingHome } from '../../home-check.ts'
import { displayValue, resolveConfig } from '../../../../config/resolve.ts'
import { SETTINGS } from '../../../../config/schema.ts'

export const configCommand: Command = {
  path: ['config'],
  examples: ['engram config', 'engram config --set memory.mode=copilot', 'engram config --docs'],
  home: 'checks',
  options: {
    docs: { type: 'boolean', description: 'print the settings reference as a markdown table' },
  },
  async run(context) {
    if (context.options.docs) {
      const markdown = configDocs()
      return { data: { markdown }, human: markdown }
    }
    const noHome = missingHome(context.io, context.settings)
    if (noHome) throw noHome
    const config = resolveConfig({ env: context.io.env, flags: context.settings })
    const settings = SETTINGS.map((spec) => ({
      key: spec.key,
      env: spec.env,
      value: displayValue(config, spec.key),
      source: config.sources[spec.key] ?? 'unset',
      description: spec.description,
    }))
    const s = makeStyle(colourFor(context.io))
    const width = Math.max(...settings.map((x) => x.key.length))
    const human = [
      s.bold(`engram configuration${config.file ? ` (file: ${config.file})` : ' (no config.json)'}`),
      ...settings.map((x) => `  ${x.key.padEnd(width)}  ${x.value.padEnd(24)} ${s.dim(`${x.source}${x.source === 'unset' ? '' : ''}  ${x.env}`)}`),
    ].join('\n')
    return { data: { file: config.file, settings }, human }
  },
}

/** The settings reference, generated from the schema (docs/configuration.md is this text). */
export function configDocs(): string {
  const rows = SETTINGS.map((s) => `| \`${s.key}\` | \`${s.env}\` | ${s.default === undefined ? '—' : `\`${String(s.default)}\``} | ${s.description.replaceAll('|', '\\|')} |`)
  return [
    '# Configuration',
    '',
    'Every setting, its environment variable and its default. Values come from defaults < `<home>/config.json`',
    '(nested: `{"memory": {"mode": "copilot"}}`) < `ENGRAM_*` environment variables < flags (`--set key=value`).',
    '`engram config` shows the value in force and where it came from. Generated from `src/config/schema.ts`',
    'by `npm run docs` — do not edit by hand.',
    '',
    '| setting | environment | default | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n')
}
