/**
 * The docs are checked against the code: the error table (docs/errors.md) against ERROR_CODES
 * (every code, once, with its class's exit code), and the README's flag tables against each command's --help (every
 * flag in one is in the other, defaults and environment variables alike). A flag or a command
 * added later fails here until the README documents it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript module of the bench, without declarations.
import { writeBenchDocs } from '../bench/readme.js';
import { ERROR_CODES, EXIT_CODES } from '../src/errors.js';
import { ROOT, runCliInProcess as runCli } from './helpers.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** The error table: docs/errors.md, linked from the README's Exit codes. */
const ERRORS = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');

/** The rows of the first Markdown table whose header row starts with `header`, as cells. */
function tableRows(markdown: string, header: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.startsWith(header));
  if (start === -1) throw new Error(`no table starting with ${header}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim()));
  }
  return rows;
}

describe('the error table (docs/errors.md)', () => {
  const rows = tableRows(ERRORS, '| Code | Exit |');
  // A row may name several codes that share a meaning.
  const codesOf = (cell: string) => cell.split(',').map((code) => code.replace(/`/g, '').trim());
  const documented = rows.flatMap(([cell]) => codesOf(cell!));

  it('lists every error code once, and nothing else', () => {
    expect(documented.filter((code, i) => documented.indexOf(code) !== i)).toEqual([]);
    expect([...documented].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it("gives each code its class's exit code, a meaning and what to do", () => {
    for (const [cell, exit, meaning, action] of rows) {
      for (const code of codesOf(cell!)) {
        const name = code as keyof typeof ERROR_CODES;
        expect(Number(exit), name).toBe(EXIT_CODES[ERROR_CODES[name]]);
        expect(meaning, name).not.toBe('');
        expect(action, name).not.toBe('');
      }
    }
  });
});

/** Every src/ file's text, errors.ts without its ERROR_CODES table (which names every code). */
function sourcesRaising(): string[] {
  const dir = join(ROOT, 'src');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => {
      const text = readFileSync(join(dir, name), 'utf8');
      return name === 'errors.ts' ? text.replace(/export const ERROR_CODES = \{[\s\S]*?\n\} as const/, '') : text;
    });
}

describe('ERROR_CODES and the code', () => {
  // The README's table is ERROR_CODES (above); the compiler refuses a code outside it. This is the
  // other direction: no code in the table that nothing can raise.
  it('every code is raised somewhere in src/, and each class that fixes its own code is used', () => {
    const sources = sourcesRaising();
    const all = sources.join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !all.includes(`'${code}'`));
    expect(unused).toEqual([]);
    const errorsTs = readFileSync(join(ROOT, 'src', 'errors.ts'), 'utf8');
    // A class whose body names a code raises it itself (NetworkError: 'network').
    const fixed = errorsTs
      .split('\nexport class ')
      .slice(1)
      .filter((body) => Object.keys(ERROR_CODES).some((code) => body.includes(`'${code}'`)))
      .map((body) => /^\w+/.exec(body)![0]);
    expect(fixed).toEqual(expect.arrayContaining(['NetworkError', 'AuthError', 'OutputError']));
    for (const name of fixed) expect(all, name).toMatch(new RegExp(`new ${name}\\(`));
  });
});

/** Each command's flags are documented in these README sections (a new command: its own `## Name`). */
const SECTIONS: Record<string, string[]> = {
  import: ['## Import', '## Validate', '### Configuration'],
  validate: ['## Validate', '## Import', '### Configuration'],
  export: ['## Export', '### Configuration'],
  check: ['## Check', '### Configuration'],
  results: ['## Results file'],
};
const sectionsOf = (command: string) =>
  SECTIONS[command] ?? [`## ${command[0]!.toUpperCase()}${command.slice(1)}`];

/** A heading's text up to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`README has no "${heading}" section`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

interface DocumentedFlag {
  flags: string[];
  environment: string;
  defaults: string;
}

/** The rows of every `| Flag | Environment | Default |` table in a piece of Markdown. */
function flagTables(markdown: string): DocumentedFlag[] {
  const rows: DocumentedFlag[] = [];
  const parts = markdown.split('\n| Flag | Environment | Default |');
  for (const part of parts.slice(1)) {
    for (const [flags = '', environment = '', defaults = ''] of tableRows(`| Flag | Environment | Default |${part}`, '| Flag |')) {
      // `--no-x` documents the boolean `--x`.
      const names = [...flags.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!.replace(/^no-/, ''));
      rows.push({ flags: names, environment, defaults });
    }
  }
  return rows;
}

interface HelpFlag {
  name: string;
  text: string;
}

/** Flags of `ccs-bulk <command> --help`, each with its wrapped description (for defaults and env). */
function helpFlags(help: string): HelpFlag[] {
  const flags: HelpFlag[] = [];
  for (const line of help.split('\n')) {
    const match = /^\s+(?:-\w, )?--([a-z][a-z-]*)\b(.*)$/.exec(line);
    if (match) flags.push({ name: match[1]!, text: match[2]! });
    else if (/^\s{6,}\S/.test(line) && flags.length > 0) flags.at(-1)!.text += ` ${line.trim()}`;
    else if (!/^\s/.test(line)) flags.push({ name: '', text: '' });
  }
  return flags.filter((flag) => flag.name !== '' && flag.name !== 'help' && flag.name !== 'version');
}

describe('README flag tables and --help', async () => {
  const top = await runCli(['--help']);
  const listed = top.stdout.split('Commands:\n')[1]?.split('\n\n')[0] ?? '';
  const commands = [...listed.matchAll(/^ {2}ccs-bulk (\w+)/gm)].map((m) => m[1]!).filter((c) => c !== 'completion');
  const helps = new Map<string, HelpFlag[]>();
  for (const command of commands) helps.set(command, helpFlags((await runCli([command, '--help'])).stdout));

  it('finds the commands and their flags', () => {
    expect(commands).toEqual(expect.arrayContaining(['import', 'validate', 'export', 'sandbox', 'keygen']));
    expect(new Set(commands).size).toBe(commands.length);
    expect(helps.get('import')!.map((f) => f.name)).toEqual(expect.arrayContaining(['quiet', 'concurrency', 'progress-interval']));
  });

  it.each(commands)('every flag of `%s --help` is in its README flag tables, with its default and environment', (command) => {
    const documented = sectionsOf(command).flatMap((heading) => flagTables(section(README, heading)));
    for (const flag of helps.get(command)!) {
      const row = documented.find((entry) => entry.flags.includes(flag.name));
      expect(row, `--${flag.name} of ${command} is not in the README's ${sectionsOf(command).join(' / ')} tables`).toBeDefined();
      const fallback = /\[default: "?([^\]"]*)"?\]/.exec(flag.text)?.[1];
      if (fallback !== undefined && fallback !== 'true' && fallback !== 'false') {
        expect(row!.defaults, `default of --${flag.name}`).toContain(fallback);
      }
      const env = /\benv (CCS_[A-Z_]+)/.exec(flag.text)?.[1];
      if (env !== undefined) expect(row!.environment, `environment of --${flag.name}`).toContain(env);
    }
  });

  it.each(commands)('every flag in the README section of `%s` is in its --help', (command) => {
    const own = flagTables(section(README, sectionsOf(command)[0]!)).flatMap((row) => row.flags);
    const names = helps.get(command)!.map((flag) => flag.name);
    expect(own.filter((flag) => !names.includes(flag))).toEqual([]);
  });

  it('the shared Configuration table holds only flags some command has', () => {
    const shared = flagTables(section(README, '### Configuration')).flatMap((row) => row.flags);
    const all = [...helps.values()].flat().map((flag) => flag.name);
    expect(shared.filter((flag) => !all.includes(flag))).toEqual([]);
  });
});

describe('benchmark figures', () => {
  it('bench/README.md and README.md show what bench/results.json holds (npm run bench:readme)', () => {
    expect(writeBenchDocs(undefined, { check: true })).toEqual([]);
  });
});

describe('docs/service.md', () => {
  it('has every section the code cites (docs/service.md#anchor)', async () => {
    const { readdir } = await import('node:fs/promises');
    const anchors = new Set(
      [...readFileSync(join(ROOT, 'docs', 'service.md'), 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-'),
      ),
    );
    const cited: string[] = [];
    for (const entry of await readdir(join(ROOT, 'src'), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
      for (const m of text.matchAll(/docs\/service\.md#([a-z0-9-]+)/g)) cited.push(m[1]!);
    }
    expect(cited.length).toBeGreaterThan(3);
    expect(cited.filter((anchor) => !anchors.has(anchor))).toEqual([]);
  });
});
