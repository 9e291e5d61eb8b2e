/**
 * The README is checked against the code: its error table against ERROR_CODES (every code,
 * once, with its class's exit code).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, EXIT_CODES } from '../src/errors.js';
import { ROOT } from './helpers.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

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

describe('README error table', () => {
  const rows = tableRows(README, '| Code | Exit |');
  const documented = rows.map(([code]) => code!.replace(/`/g, ''));

  it('lists every error code once, and nothing else', () => {
    expect(documented.filter((code, i) => documented.indexOf(code) !== i)).toEqual([]);
    expect([...documented].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it("gives each code its class's exit code, a meaning and what to do", () => {
    for (const [code, exit, meaning, action] of rows) {
      const name = code!.replace(/`/g, '') as keyof typeof ERROR_CODES;
      expect(Number(exit), name).toBe(EXIT_CODES[ERROR_CODES[name]]);
      expect(meaning, name).not.toBe('');
      expect(action, name).not.toBe('');
    }
  });
});
