/**
 * A source read as the import read it: the same reader (CSV, .xlsx, .ods, .xls; encoding,
 * delimiter, sheet and header found or given the same way), the same column mapping and the
 * same row checks and normalization (rowValidator: country to ISO alpha-2, currency to ISO
 * 4217, dates to YYYY-MM-DD, values trimmed). Rows stream; nothing of them is kept.
 */
import type { Field } from '../import/fields.js';
import { openRows, positionWord, type RawRecord, type ReadOptions, type SourceInfo } from '../import/read/index.js';
import { headerTest, mapColumns } from '../import/row/columns.js';
import { type Identity, identityText } from '../import/row/identity.js';
import type { DateFormat } from '../import/row/normalize.js';
import { rowValidator, type RowValidator } from '../import/row/validate-row.js';

export interface SourceReading {
  read: ReadOptions;
  map: Partial<Record<Field, string>>;
  dateFormat: DateFormat;
  liquidityType: string;
}

export interface OpenedSource {
  info: SourceInfo;
  headers: string[];
  validate: RowValidator;
  rows(): AsyncGenerator<RawRecord>;
  close(): Promise<void>;
}

export async function openSource(file: string, reading: SourceReading): Promise<OpenedSource> {
  const source = await openRows(file, { headerTest: headerTest(reading.map), ...reading.read });
  try {
    const { info, headers } = source;
    const plan = mapColumns(file, headers, reading.map, info.header.line, positionWord(info.format));
    const validate = rowValidator(plan, { dateFormat: reading.dateFormat, liquidityType: reading.liquidityType });
    return {
      info,
      headers,
      validate,
      async *rows() {
        for await (const batch of source.batches) yield* batch;
      },
      close: () => source.close(),
    };
  } catch (error) {
    await source.close();
    throw error;
  }
}

/** How the sources were read, for the evidence: what was given, and `detected` where nothing was. */
export function readingFacts(reading: SourceReading & { identity: Identity }): Record<string, unknown> {
  const { read } = reading;
  return {
    encoding: read.encoding ?? 'detected',
    delimiter: read.delimiter ?? 'detected',
    sheet: read.sheet ?? 'the first',
    header_row: read.headerRow ?? 'found',
    map: reading.map,
    date_format: reading.dateFormat,
    identity: identityText(reading.identity),
  };
}
