/**
 * Reading the config file: its JSON (a syntax error shows the line, the column and a caret),
 * every problem in it at once (one line each, named by key), and its relative paths read from
 * the file's own folder, so `--config cfg/ccs-bulk.config.json` works from any directory.
 */
import { lstatSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { z } from 'zod';
import { checkConfigValues } from './config-check.js';
import { type Config, CONFIG_FILE, type ConfigProblem, configSchema, keysOf, PATH_KEYS } from './config-schema.js';

export type { ConfigProblem } from './config-schema.js';
import { UsageError } from '../errors.js';
import { ownerOf, shownPath } from '../infra/printable.js';
import { didYouMean } from '../infra/did-you-mean.js';

export interface LoadedConfig {
  /** The file as named (relative to the current directory, or absolute). */
  file: string;
  /** Found in the current directory, not named by --config or CCS_CONFIG. */
  implicit: boolean;
  /** The values, checked, with every path absolute. */
  config: Config;
}


/**
 * `--config FILE`, else CCS_CONFIG, else ./ccs-bulk.config.json when it exists. The last is
 * found, not chosen: it is read only when the running user owns it and nobody else can change
 * it, and it cannot move the connection or the files written (config.ts refuses those keys).
 */
export async function loadConfig(flag: string | undefined, env: NodeJS.ProcessEnv): Promise<LoadedConfig | undefined> {
  const named = flag ?? (env.CCS_CONFIG?.trim() || undefined);
  const file = named ?? CONFIG_FILE;
  let text: string;
  try {
    if (named === undefined) assertTrusted(file);
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (named === undefined && code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read config ${shownPath(file)}: ${code ?? 'error'}`, 'config_invalid');
  }
  const raw = parseJson(text, file);
  const problems = [...secretProblems(raw, [])];
  const parsed = configSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) problems.push(...parsed.error.issues.flatMap(describeIssue));
  // Values are checked where their type is right: a wrong type is one problem, not two.
  const typed = problems.map((problem) => problem.at);
  problems.push(...(await checkConfigValues(raw, typed)));
  if (problems.length > 0 || !parsed.success) throw configInvalid(file, inFileOrder(problems, raw));
  return { file, implicit: named === undefined, config: absolutePaths(parsed.data, dirname(resolve(file))) };
}

/**
 * The found config: a regular file (not a link) of the running user, that neither it nor its
 * folder lets anyone else change (a folder with the sticky bit, like /tmp, keeps others from
 * replacing a file they do not own). As git's safe.directory: another account's file is refused.
 */
function assertTrusted(file: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const stats = lstatSync(file);
  const refuse = (why: string, fix: string) =>
    new UsageError(
      `${file} in the current directory is not read: ${why}. A config file that is only found is read when it is yours and ` +
        `nobody else can change it: ${fix}, or name a file you trust with --config FILE`,
      'config_untrusted',
    );
  if (stats.isSymbolicLink()) throw refuse('it is a symbolic link', 'replace the link by the file');
  if (!stats.isFile()) throw refuse('it is not a regular file', 'remove it');
  if (stats.uid !== uid) throw refuse(`it belongs to ${ownerOf(stats.uid)}, not to you`, 'remove it, or copy it and own the copy');
  if ((stats.mode & 0o022) !== 0) {
    throw refuse(`others can write it (mode ${(stats.mode & 0o777).toString(8)})`, `chmod go-w ${file}`);
  }
  const folder = statSync(dirname(resolve(file)));
  if ((folder.mode & 0o022) !== 0 && (folder.mode & 0o1000) === 0) {
    throw refuse(`others can write its folder (mode ${(folder.mode & 0o777).toString(8)}) and replace it`, 'chmod go-w .');
  }
}

/** One line per problem, each `config_invalid: FILE: key: message`. */
export function configInvalid(file: string, problems: readonly ConfigProblem[]): UsageError {
  const lines = problems.map(({ at, message }) => `config_invalid: ${file}: ${at}: ${message}`);
  const head = lines.length > 1 ? `${file}: ${lines.length} problems, nothing was run:\n` : '';
  return new UsageError(`${head}${lines.join('\n')}`, 'config_invalid');
}

/** JSON.parse, with a failure shown at its line and column, the line's text, a caret and a hint. */
function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const at = /at position (\d+)/.exec(message);
    const position = at ? Number(at[1]) : text.length;
    const before = text.slice(0, position);
    const line = before.split('\n').length;
    const column = position - before.lastIndexOf('\n');
    const source = (text.split('\n')[line - 1] ?? '').replace(/\r$/, '');
    const gutter = `${line} | `;
    const what = message.replace(/ in JSON at position \d+.*$/, '').replace(/ \(line \d+ column \d+\)$/, '');
    const hint = jsonHint(text, position);
    // A line that may hold a secret (a key pasted in, a token) is named, never shown.
    const shown = SECRET_LINE.test(source)
      ? `  ${gutter}(not shown: it may hold a secret)`
      : `  ${gutter}${source}\n  ${' '.repeat(gutter.length + column - 1)}^`;
    throw new UsageError(
      `config_invalid: ${file}: not valid JSON at line ${line}, column ${column}: ${what}\n${shown}${hint ? `\n  ${hint}` : ''}`,
      'config_invalid',
    );
  }
}

const SECRET_LINE = /PRIVATE KEY|lk_[a-z]+_|[A-Za-z0-9+/]{40,}|"(token|apiToken|password|privateKey|signingKey|key)"\s*:|\/\/[^/@\s]*:[^/@\s]*@/i;

/** The usual reasons a hand-written JSON file fails: a trailing comma, a comment, single quotes. */
function jsonHint(text: string, position: number): string | undefined {
  const rest = text.slice(position);
  if (/^\s*[}\]]/.test(rest) && /,\s*$/.test(text.slice(0, position))) {
    return 'hint: JSON takes no comma after the last item of an object or list: remove it';
  }
  if (/^\s*\/[/*]/.test(rest) || /(^|\n)\s*\/\//.test(text)) return 'hint: JSON has no comments: remove them';
  if (/^\s*'/.test(rest)) return 'hint: JSON strings and keys take double quotes';
  if (/^\s*[A-Za-z_$]/.test(rest)) return 'hint: keys take double quotes ("key": value)';
  return undefined;
}

/** Keys that would hold a secret's value: refused by name, with the way to give it instead. */
const SECRET_KEYS: Record<string, string> = {
  token: 'use "tokenFile" (a path) or "tokenEnv" (the name of an environment variable)',
  apiToken: 'use "tokenFile" (a path) or "tokenEnv" (the name of an environment variable)',
  signingKey: 'use "signingKeyFile" (the path of the PEM file)',
  privateKey: 'use "signingKeyFile" (the path of the PEM file)',
  key: 'use "signingKeyFile" (the path of the PEM file)',
  password: 'secrets stay out of the config file',
};

function* secretProblems(value: unknown, at: string[]): Generator<ConfigProblem> {
  if (typeof value === 'string') {
    if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(value)) {
      yield { at: at.join('.'), message: 'holds a private key: a key value is refused; give its file path in connection.signingKeyFile' };
    } else if (at.at(-1) === 'proxy' && /^[a-z]+:\/\/[^/@]*:[^/@]*@/i.test(value)) {
      yield { at: at.join('.'), message: 'holds proxy credentials: give them with --proxy or CCS_PROXY, not in the file' };
    }
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    const how = SECRET_KEYS[key];
    if (how !== undefined && at.length <= 1) {
      yield { at: [...at, key].join('.'), message: `a token or key value is refused in the config file; ${how}` };
    } else {
      yield* secretProblems(inner, [...at, key]);
    }
  }
}

/** A zod issue as problems named by key: an unknown key with the close one, a value with the valid ones. */
function describeIssue(issue: z.core.$ZodIssue): ConfigProblem[] {
  const at = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const known = keysOf(issue.path);
    // A secret's key is reported as one already (secretProblems), with the way to give it.
    return issue.keys
      .filter((key) => !(key in SECRET_KEYS && issue.path.length <= 1))
      .map((key) => ({ at: at === '' ? key : `${at}.${key}`, message: unknownKey(key, issue.path, known) }));
  }
  if (issue.code === 'invalid_value') {
    const values = issue.values.map(String);
    const got = issue.input;
    const guess = typeof got === 'string' ? didYouMean(got, values) : '';
    return [{ at: at || '(top level)', message: `unknown value ${JSON.stringify(got)}${guess}; valid values are ${values.join(', ')}` }];
  }
  const got = issue.input === undefined ? '' : ` (got ${shownInput(issue.input)})`;
  if (issue.code === 'too_small') return [{ at, message: `must be at least ${String(issue.minimum)}${got}` }];
  if (issue.code === 'too_big') return [{ at, message: `must be at most ${String(issue.maximum)}${got}` }];
  if (issue.code === 'invalid_type') return [{ at: at || '(top level)', message: `must be ${article(issue.expected)}${got}` }];
  return [{ at: at || '(top level)', message: `${issue.message}${got}` }];
}

/** An unknown key: the close one, or the section it belongs to (`quiet` in a report is the export section's). */
function unknownKey(key: string, at: readonly PropertyKey[], known: readonly string[]): string {
  const homes = ['export', 'import', 'connection'].filter((section) => section !== at[0] && keysOf([section]).includes(key));
  if (homes.length > 0) return `unknown key here: "${key}" goes in the ${homes.map((home) => `"${home}"`).join(' or ')} section`;
  return `unknown key${didYouMean(key, known)}; keys here are ${known.join(', ')}`;
}

/** What a wrong value was: a number or a boolean as it is, anything else by its kind (a string may be a secret). */
function shownInput(input: unknown): string {
  if (typeof input === 'number' || typeof input === 'boolean' || input === null) return JSON.stringify(input);
  if (typeof input === 'string') return 'a string';
  return Array.isArray(input) ? 'a list' : 'an object';
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** Problems in the order their keys appear in the file (a key not in it, last). */
function inFileOrder(problems: readonly ConfigProblem[], raw: unknown): ConfigProblem[] {
  const order: string[] = [];
  const walk = (value: unknown, at: string) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
    for (const [key, inner] of Object.entries(value)) {
      const path = at === '' ? key : `${at}.${key}`;
      order.push(path);
      walk(inner, path);
    }
  };
  walk(raw, '');
  const rank = (at: string) => {
    for (let path = at; path !== ''; path = path.slice(0, Math.max(0, path.lastIndexOf('.')))) {
      const index = order.indexOf(path);
      if (index !== -1) return index;
    }
    return order.length;
  };
  return [...problems].sort((a, b) => rank(a.at) - rank(b.at));
}

/** Every path key made absolute from the config file's folder (`-`, stdout, stays as it is). */
function absolutePaths(config: Config, folder: string): Config {
  const fix = <T extends Record<string, unknown>>(section: T | undefined, keys: readonly string[]): T | undefined => {
    if (section === undefined) return undefined;
    const copy: Record<string, unknown> = { ...section };
    for (const key of keys) {
      const value = copy[key];
      // `-` is stdout, heldCache's `none` no file at all.
      const word = value === '-' || (key === 'heldCache' && value === 'none');
      if (typeof value === 'string' && !word && !isAbsolute(value)) copy[key] = resolve(folder, value);
    }
    return copy as T;
  };
  const reports = config.reports === undefined
    ? undefined
    : Object.fromEntries(Object.entries(config.reports).map(([name, report]) => [name, fix(report, PATH_KEYS.report)!]));
  return Object.fromEntries(
    Object.entries({
      ...config,
      connection: fix(config.connection, PATH_KEYS.connection),
      import: fix(config.import, PATH_KEYS.import),
      export: fix(config.export, PATH_KEYS.export),
      reports,
    }).filter(([, value]) => value !== undefined),
  ) as Config;
}
