import { Transform } from 'node:stream';

/**
 * What a spreadsheet may run as a formula at the start of a cell: `=`, `+`, `-` or `@`, a tab or a
 * carriage return (the OWASP advice on CSV injection:
 * https://owasp.org/www-community/attacks/CSV_Injection), also after spaces (some spreadsheets trim
 * them) or quotes (a lenient parser may drop a quoted cell's doubled quotes) and as their full-width
 * forms (some read those as the ASCII signs).
 */
const formulaStart = /^[ "]*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/**
 * The same after a semicolon or a line break inside a cell: a spreadsheet whose locale separates
 * lists with `;` (German, French, ...) splits the line there, quotes or not (the line does not
 * start with one), and starts a row at a line break the same way; what follows starts a cell of
 * its own (OWASP: the separators must be handled too).
 */
const formulaAfterSeparator = /([;\r\n])(?=[ "]*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20])/g;

/**
 * One CSV cell (RFC 4180), safe to open in a spreadsheet: a cell that could start a formula gets a
 * leading `'`, and so does what follows a `;` that could; a cell with a quote, comma or line break
 * is quoted, its quotes doubled.
 */
export function csvCell(value: string): string {
  const safe = (formulaStart.test(value) ? `'${value}` : value).replace(formulaAfterSeparator, "$1'");
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One CSV line of cells, CRLF-terminated as RFC 4180 says. */
export const csvLine = (cells: readonly string[]): string => `${cells.map(csvCell).join(',')}\r\n`;

/**
 * Objects in, CSV text out: the header line first (none when `header` is undefined: the rest of a
 * file that has it), then one line per object. Like ndjsonStream, a `pipeline` stage, so a slow
 * reader holds back storage's batches.
 */
export function csvStream<T>(
  header: readonly string[] | undefined,
  toCells: (item: T) => readonly string[],
): Transform {
  let started = header === undefined;
  return new Transform({
    writableObjectMode: true,
    // One item: storage pages are bounded by bytes, and one page is the read-ahead. Items can be
    // megabytes each (WEBHOOK_MAX_BODY_BYTES): 64 buffered here held 64 payloads per stalled reader.
    writableHighWaterMark: 1,
    transform(item: T, _encoding, callback) {
      const head = started || header === undefined ? '' : csvLine(header);
      started = true;
      callback(null, head + csvLine(toCells(item)));
    },
    flush(callback) {
      // An export with no match is its header alone.
      callback(null, started || header === undefined ? '' : csvLine(header));
    },
  });
}
