/**
 * What a spreadsheet reader ends with, whatever the format: the header split off the chosen
 * sheet's records, an empty sheet refused, and the source described.
 */
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { splitHeader } from './shape-records.js';
import type { LineRecord, RawRecord, ReadOptions, SourceFormat, SourceInfo } from './types.js';

/** A sheet's cells are text already: no encoding or delimiter was detected or given. */
const SHEET_TEXT = { encoding: 'utf-8', encodingSource: 'default', delimiter: ',', delimiterSource: 'default' } as const;

export interface SplitSheet {
  info: SourceInfo;
  headers: string[];
  batches: AsyncGenerator<RawRecord[]>;
}

export async function splitSheet(
  records: AsyncGenerator<LineRecord[]>,
  source: { file: string; format: SourceFormat; sheet: string; sizeBytes: number },
  options: ReadOptions,
): Promise<SplitSheet> {
  const { file, format, sheet, sizeBytes } = source;
  const split = await splitHeader(records, { file, headerRow: options.headerRow, headerTest: options.headerTest, pad: true });
  if (split === undefined) throw new InputError(`${shownPath(file)}: sheet "${sheet}" is empty`, 'input_empty', { file });
  const info: SourceInfo = { file, format, ...SHEET_TEXT, sheet, sizeBytes, header: split.header };
  return { info, headers: split.headers, batches: split.batches };
}
