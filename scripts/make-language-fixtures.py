"""fixtures/input/languages/: client lists as people in Germany, France and Spain save them.

- german-excel.csv: a Munich team's list saved as "CSV (Trennzeichen-getrennt)": windows-1252,
  `;`, a title and an export date above German headers, dates as the cells show them
  (DD.MM.YYYY), the planted errors of a real list, and a name windows-1252 has no letter for
  (the `Ł` of Łukasz becomes `?`, as the save does). LibreOffice writes the CSV from an
  openpyxl workbook whose date cells are formatted DD.MM.YYYY.
- french.xlsx: a French workbook (openpyxl), date cells formatted dd/mm/yyyy, one date typed
  as text.
- spanish.csv: a Spanish list saved by LibreOffice as CSV with `;`, UTF-8.

Needs (only to regenerate; the tests read the committed files):
  apt-get install -y libreoffice-calc-nogui python3-openpyxl
Run: /usr/bin/python3 scripts/make-language-fixtures.py
"""
import datetime
import os
import shutil
import subprocess
import tempfile

import openpyxl

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "input", "languages")
D = datetime.date


def book(headers, rows, date_column, date_format, title=None):
    wb = openpyxl.Workbook()
    sheet = wb.active
    sheet.title = "Kunden" if title else "Clients"
    for line in title or []:
        sheet.append(line)
    sheet.append(headers)
    for row in rows:
        sheet.append(row)
        cell = sheet.cell(row=sheet.max_row, column=date_column + 1)
        if isinstance(cell.value, D):
            cell.number_format = date_format
    return wb


def soffice_csv(xlsx, out, options):
    """LibreOffice's own CSV save: filter options are separator, quote, character set (1 = windows-1252, 76 = UTF-8), first line."""
    with tempfile.TemporaryDirectory() as temp:
        profile = "file://" + os.path.join(temp, "profile")
        subprocess.run(
            ["soffice", "--headless", "--norestore", f"-env:UserInstallation={profile}", "--convert-to",
             f"csv:Text - txt - csv (StarCalc):{options}", "--outdir", temp, xlsx],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180,
        )
        shutil.copyfile(os.path.join(temp, os.path.splitext(os.path.basename(xlsx))[0] + ".csv"), out)


def german():
    countries = ["Deutschland", "Österreich", "Schweiz", "Frankreich", "Vereinigtes Königreich", "DE", "BRD", "Niederlande"]
    currencies = ["EUR", "€", "Euro", "CHF", "SFr.", "Franken", "£", "EUR"]
    rows = []
    for i in range(1, 41):
        country = countries[i % len(countries)]
        currency = currencies[i % len(currencies)]
        rows.append([f"K{10000 + i}", f"Kunde {i} GmbH", f"kunde{i}@example.de", country,
                     f"Hauptstraße {i}, 80331 München", currency, D(2024, 1 + i % 12, 1 + (i * 7) % 28), ""])
    # The planted errors, each on its own row.
    rows[2][2] = ""                                      # empty e-mail
    rows[3][2] = "   "                                   # spaces-only e-mail
    rows[4][3] = "Deutschalnd"                           # misspelt country
    rows[5][6] = "31.02.2024"                            # no such day, typed as text
    rows[6][6] = "1.7.24"                                # two-digit year
    rows[7][1] = ""                                      # empty name
    rows[8][2] = "kunde9@gmial.com"                      # mistyped domain
    rows[9][2] = "KUNDE1@EXAMPLE.DE"                     # the first client again, in capitals
    rows[10][1] = "Łukasz Król"                          # no Ł in windows-1252: saved as ?
    rows[11][3] = "Östereich"                            # misspelt country
    rows[12][5] = "$"                                    # which dollar?
    rows[13][6] = "15.02.2024"                           # a date typed as text, day over 12
    rows[14][7] = "ruft zurück"
    headers = ["Kundennr.", "Name", "E-Mail", "Land", "Anschrift", "Währung", "Antragsdatum", "Bemerkung"]
    title = [["Kundenliste Team München"], ["Stand: 01.03.2026"]]
    with tempfile.TemporaryDirectory() as temp:
        xlsx = os.path.join(temp, "german-excel.xlsx")
        book(headers, rows, 6, "DD.MM.YYYY", title).save(xlsx)
        soffice_csv(xlsx, os.path.join(OUT, "german-excel.csv"), "59,34,1,1")


def french():
    countries = ["Allemagne", "France", "Royaume-Uni", "Suisse", "Belgique", "États-Unis", "Grande-Bretagne", "Turquie", "FR"]
    currencies = ["EUR", "€", "euros", "CHF", "francs suisses", "dollar canadien", "£", "Fr.", "EUR"]
    rows = []
    for i in range(1, 31):
        rows.append([f"Client {i} SARL", f"client{i}@example.fr", countries[i % len(countries)],
                     f"{i} rue de la Paix, 75002 Paris", currencies[i % len(currencies)], D(2024, 1 + i % 12, 1 + (i * 5) % 28)])
    rows[3][2] = "Allemagen"                             # misspelt country
    rows[4][4] = "$"                                     # which dollar?
    rows[5][5] = "31/12/2024"                            # a date typed as text
    rows[6][5] = "1/7/2024"                              # the same, both numbers under 13
    headers = ["Nom", "Courriel", "Pays", "Adresse", "Devise", "Date de demande"]
    book(headers, rows, 5, "dd/mm/yyyy").save(os.path.join(OUT, "french.xlsx"))


def spanish():
    countries = ["España", "Alemania", "Francia", "Reino Unido", "EE.UU.", "México", "Países Bajos", "Holanda", "ES"]
    currencies = ["EUR", "€", "euros", "dólar estadounidense", "libra esterlina", "USD", "kr", "EUR", "peso mexicano"]
    rows = []
    for i in range(1, 31):
        rows.append([f"Cliente {i} S.L.", f"cliente{i}@example.es", countries[i % len(countries)],
                     f"Calle Mayor {i}, 28013 Madrid", currencies[i % len(currencies)], D(2024, 1 + i % 12, 1 + (i * 3) % 28)])
    rows[2][2] = "Alemana"                               # misspelt country
    rows[3][5] = "31-12-2024"                            # typed as text, dashes
    headers = ["Nombre", "Correo electrónico", "País", "Dirección", "Moneda", "Fecha de solicitud"]
    with tempfile.TemporaryDirectory() as temp:
        xlsx = os.path.join(temp, "spanish.xlsx")
        book(headers, rows, 5, "DD/MM/YYYY").save(xlsx)
        soffice_csv(xlsx, os.path.join(OUT, "spanish.csv"), "59,34,76,1")


os.makedirs(OUT, exist_ok=True)
german()
french()
spanish()
