import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { ALIASES, FIELDS, type Field, foldHeader, REQUIRED_FIELDS } from '../fields.js';
import type { HeaderTest } from '../read/index.js';

/** Which input column feeds which field: plain data, decided before the first request. */
export interface ColumnPlan {
  headers: string[];
  /** field → column index */
  columns: Partial<Record<Field, number>>;
  /** headers that feed no field (reported once, ignored) */
  unknown: string[];
}

/**
 * Maps headers to fields: --map first (exact header, then folded), then aliases, folded.
 * Missing required columns stop the run before anything is sent.
 */
export function mapColumns(
  file: string,
  headers: string[],
  map: Partial<Record<Field, string>>,
  line = 1,
  /** What `line` counts, for messages: CSV lines, or a sheet's rows. */
  unit: 'line' | 'row' = 'line',
): ColumnPlan {
  const folded = headers.map(foldHeader);
  const columns: Partial<Record<Field, number>> = {};
  const taken = new Set<number>();

  for (const field of FIELDS) {
    const wanted = map[field];
    if (wanted === undefined) continue;
    let index = headers.indexOf(wanted);
    if (index < 0) index = folded.indexOf(foldHeader(wanted));
    if (index < 0) {
      throw new InputError(
        `${shownPath(file)}: --map ${field}=${wanted}: no such column; headers found: ${list(headers)}`,
        'map_unknown_header',
        { file, line },
      );
    }
    columns[field] = index;
    taken.add(index);
  }

  for (const field of FIELDS) {
    if (columns[field] !== undefined) continue;
    // Aliases are in order of preference: a "name" column wins over a "client name" one.
    for (const alias of ALIASES[field].map(foldHeader)) {
      const matches = folded.flatMap((name, index) => (name === alias && !taken.has(index) ? [index] : []));
      const [first, second] = matches;
      if (first === undefined) continue;
      if (second !== undefined) {
        throw new InputError(
          `${shownPath(file)}: columns ${matches.map((i) => i + 1).join(' and ')} are both ${JSON.stringify(headers[first])}; ` +
            'rename one so it is clear which is the ' +
            field,
          'duplicate_columns',
          { file, line },
        );
      }
      columns[field] = first;
      taken.add(first);
      break;
    }
  }

  const missing = REQUIRED_FIELDS.filter((field) => columns[field] === undefined);
  if (missing.length > 0) {
    throw new InputError(
      `${shownPath(file)}: missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; ` +
        `headers found${line > 1 ? ` (${unit} ${line})` : ''}: ${list(headers)}. ` +
        'Rename the columns or use --map field=Header (--header-row N if the header is another row).',
      'missing_columns',
      { file, line },
    );
  }
  const unknown = headers.filter((header, index) => !taken.has(index) && header.trim() !== '');
  return { headers, columns, unknown };
}

function list(headers: readonly string[]): string {
  return headers.length === 0 ? '(none)' : headers.map((h) => JSON.stringify(h)).join(', ');
}

/** What the header row must hold, as the reader tests rows for it (a title block above it). */
export function headerTest(map: Partial<Record<Field, string>>): HeaderTest {
  return {
    required: REQUIRED_FIELDS.map((field) => {
      const wanted = map[field];
      return wanted === undefined ? ALIASES[field].map(foldHeader) : [foldHeader(wanted)];
    }),
  };
}
