/** The spreadsheet corpus (fixtures/input/sheets/): each producer's file of source.csv's rows. */
import { join } from 'node:path';
import { ROOT } from './helpers.js';

export const SHEETS = join(ROOT, 'fixtures', 'input', 'sheets');

export const PRODUCERS = [
  ['libreoffice.xlsx', 'xlsx'],
  ['libreoffice.ods', 'ods'],
  ['libreoffice.xls', 'xls'],
  ['openpyxl.xlsx', 'xlsx'],
  ['openpyxl-1904.xlsx', 'xlsx'],
  ['exceljs.xlsx', 'xlsx'],
  ['sheetjs.xlsx', 'xlsx'],
  ['sheetjs.ods', 'ods'],
  ['sheetjs.xls', 'xls'],
  ['sheetjs-biff5.xls', 'xls'],
] as const;
