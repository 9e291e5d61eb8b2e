#!/usr/bin/env python3
"""Prints what openpyxl, a third-party reader, sees in a fix-it workbook: the frozen pane,
the autofilter, the header's boldness, and every cell's fill, value and comment."""
import json
import sys

import openpyxl

book = openpyxl.load_workbook(sys.argv[1])
sheet = book.active
print(f"sheet={sheet.title} frozen={sheet.freeze_panes} autofilter={sheet.auto_filter.ref}")
print("header bold=" + ",".join(str(bool(c.font.b)) for c in sheet[1]))
for row in sheet.iter_rows():
    for c in row:
        if c.value is None and c.comment is None and c.fill.fill_type is None:
            continue
        fill = c.fill.fgColor.rgb if c.fill.fill_type == "solid" else "none"
        comment = "" if c.comment is None else " comment=" + json.dumps(c.comment.text, ensure_ascii=False)
        print(f"{c.coordinate} fill={fill} type={c.data_type} value={json.dumps(c.value, ensure_ascii=False)}{comment}")
