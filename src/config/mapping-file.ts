/**
 * A column mapping kept in a file: `validate --save-mapping FILE` writes the mapping a run
 * resolved (templates included) and `--mapping FILE` reads it back, so a team migrating many
 * files from one system settles it once. The file is `{"map": {field: header or template}}`,
 * the shape of a config file's `import` section, where it can be pasted as it is. A recognized
 * export's address is kept as its template ending in ` (by country)` (composite.ts): read back,
 * it is put together in each row's country's order again, not in the one order written.
 */
import { closeSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { FIELDS, type Field } from '../import/fields.js';
import { checkTemplates } from '../import/row/composite.js';
import { replacePrivate, writeFully } from '../infra/output-files.js';
import { shownPath } from '../infra/printable.js';

/** A mapping file is a few lines; anything much larger is not one. */
const MAX_BYTES = 1 << 20;

const mappingSchema = z
  .object({ map: z.partialRecord(z.enum(FIELDS), z.string().min(1)) })
  .strict();

/** The map a --mapping file holds; a file that is not one is a usage error naming it. */
export function readMappingFile(path: string): Partial<Record<Field, string>> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--mapping ${shownPath(path)}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'bad_option');
  }
  if (text.length > MAX_BYTES) throw new UsageError(`--mapping ${shownPath(path)}: not a mapping file (over 1 MiB)`, 'bad_option');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--mapping ${shownPath(path)}: not JSON (${(error as Error).message})`, 'bad_option');
  }
  const parsed = mappingSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.join('.')}`;
    throw new UsageError(
      `--mapping ${shownPath(path)}: not a mapping file${at}: ${issue?.message ?? 'invalid'}; it holds {"map": {"name": "{First Name} {Last Name}", …}} (fields: ${FIELDS.join(', ')})`,
      'bad_option',
    );
  }
  const map = parsed.data.map as Partial<Record<Field, string>>;
  checkTemplates(map);
  return map;
}

/** Writes the mapping a run resolved (field → header, or template), replacing the file whole. */
export function writeMappingFile(path: string, columns: Readonly<Partial<Record<Field, string>>>): void {
  const map = Object.fromEntries(FIELDS.flatMap((field) => (columns[field] === undefined ? [] : [[field, columns[field]]])));
  const fd = replacePrivate(path);
  try {
    writeFully(fd, `${JSON.stringify({ map }, null, 2)}\n`, path);
  } finally {
    closeSync(fd);
  }
}
