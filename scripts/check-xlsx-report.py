#!/usr/bin/env python3
"""Reads an xlsx report of `ccs-bulk export` with openpyxl and compares it, cell for cell,
with the CSV export of the same clients made with --no-escape-formulas (the values as the
service holds them). Exit 1 on any difference.

Checked as well: the header is bold and frozen, the autofilter covers every row, created_at
cells are date-times, documents_count a number, every other cell a string, no cell a formula,
and openpyxl's read-only mode (what pandas.read_excel uses) reads the same values.

The one difference by design: a value that already looks escaped (a quote, then = + - @ tab
or CR, such as '=x) carries one more quote in the workbook, as import strips one.

--dump FILE writes openpyxl's read-back as JSON, for tests that run without Python.
Run: python3 scripts/check-xlsx-report.py report.xlsx export.csv [--dump readback.json]
"""
import argparse
import csv
import datetime
import json
import re
import sys

import openpyxl

LOOKS_ESCAPED = re.compile(r"^'+[=+\-@\t\r]")


def cell_json(value):
    """openpyxl's value → {"s"|"d"|"n": ...}, or None for an empty cell."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        if value.microsecond % 1000:
            raise ValueError(f"{value!r} is not a whole millisecond")
        return {"d": value.strftime("%Y-%m-%dT%H:%M:%S") + f".{value.microsecond // 1000:03d}Z"}
    if isinstance(value, bool):
        raise ValueError(f"unexpected boolean {value!r}")
    if isinstance(value, (int, float)):
        return {"n": value}
    if isinstance(value, str):
        return {"s": value}
    raise ValueError(f"unexpected cell value {value!r}")


def cell_text(cell):
    """The text the CSV export holds for a cell read back."""
    if cell is None:
        return ""
    (kind, value), = cell.items()
    if kind == "n":
        return str(int(value)) if float(value).is_integer() else repr(value)
    return value


def expected_text(csv_value):
    return "'" + csv_value if LOOKS_ESCAPED.match(csv_value) else csv_value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("xlsx")
    parser.add_argument("csv")
    parser.add_argument("--dump", help="write openpyxl's read-back here as JSON")
    args = parser.parse_args()
    problems = []

    book = openpyxl.load_workbook(args.xlsx)
    sheet = book.worksheets[0]
    rows = [[cell_json(cell.value) for cell in row] for row in sheet.iter_rows()]
    header = [cell_text(cell) for cell in rows[0]]
    last = f"{openpyxl.utils.get_column_letter(len(header))}{len(rows)}"

    if sheet.freeze_panes != "A2":
        problems.append(f"frozen panes at {sheet.freeze_panes}, not A2")
    if sheet.auto_filter.ref != f"A1:{last}":
        problems.append(f"autofilter {sheet.auto_filter.ref}, not A1:{last}")
    if not all(cell.font.b for cell in sheet[1]):
        problems.append("the header row is not bold")
    for row in sheet.iter_rows():
        for cell in row:
            if cell.data_type == "f":
                problems.append(f"{cell.coordinate} is a formula: {cell.value!r}")
            column = header[cell.column - 1]
            if cell.value is None:
                continue
            kind = next(iter(cell_json(cell.value)))
            want = "s" if cell.row == 1 else {"created_at": "d", "documents_count": "n"}.get(column, "s")
            if kind != want:
                problems.append(f"{cell.coordinate} ({column}) is {kind!r}, not {want!r}")
            if kind == "d" and "yy" not in cell.number_format:
                problems.append(f"{cell.coordinate} has number format {cell.number_format!r}")

    fast = openpyxl.load_workbook(args.xlsx, read_only=True)
    fast_rows = [[cell_json(v) for v in row] for row in fast.worksheets[0].iter_rows(values_only=True)]
    fast.close()
    width = len(header)
    padded = lambda table: [row + [None] * (width - len(row)) for row in table]
    if padded(fast_rows) != padded(rows):
        problems.append("read-only mode reads other values than the full load")

    with open(args.csv, newline="", encoding="utf-8") as file:
        records = list(csv.reader(file))
    if len(records) != len(rows):
        problems.append(f"{len(rows)} rows in the workbook, {len(records)} in the CSV")
    compared = 0
    for number, (row, record) in enumerate(zip(rows, records), start=1):
        texts = [cell_text(cell) for cell in row] + [""] * (len(record) - len(row))
        for column, (got, want) in enumerate(zip(texts, record)):
            compared += 1
            want = want if number == 1 else expected_text(want)
            if got != want:
                problems.append(f"row {number}, {header[column]}: workbook {got!r}, CSV {want!r}")

    if args.dump:
        meta = {
            "reader": f"openpyxl {openpyxl.__version__}",
            "sheet": sheet.title,
            "frozen": sheet.freeze_panes,
            "autofilter": sheet.auto_filter.ref,
            "headerBold": all(cell.font.b for cell in sheet[1]),
        }
        # One row per line, so a changed cell shows as a changed row in a diff.
        head = json.dumps(meta, ensure_ascii=False, indent=1)[: -len("\n}")]
        lines = ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows)
        with open(args.dump, "w", encoding="utf-8") as file:
            file.write(f'{head},\n "rows": [\n{lines}\n ]\n}}\n')

    for problem in problems[:50]:
        print(problem, file=sys.stderr)
    print(f"{args.xlsx}: {len(rows) - 1} rows, {compared} cells compared with {args.csv}: {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
