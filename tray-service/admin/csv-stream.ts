import { Transform } from 'node:stream';

/**
 * One CSV cell (RFC 4180), safe to open in a spreadsheet: a cell that starts with `=`, `+`, `-` or
 * `@` (or a tab or carriage return) would be read as a formula, so it gets a leading `'` (the OWASP
 * advice on CSV injection: https://owasp.org/www-community/attacks/CSV_Injection); a cell with a
 * quote, comma or line break is quoted, its quotes doubled.
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One CSV line of cells, CRLF-terminated as RFC 4180 says. */
export const csvLine = (cells: readonly string[]): string => `${cells.map(csvCell).join(',')}\r\n`;

/**
 * Objects in, CSV text out: the header line first, then one line per object. Like ndjsonStream, a
 * `pipeline` stage, so a slow reader holds back storage's batches.
 */
export function csvStream<T>(header: readonly string[], toCells: (item: T) => readonly string[]): Transform {
  let started = false;
  return new Transform({
    writableObjectMode: true,
    writableHighWaterMark: 64,
    transform(item: T, _encoding, callback) {
      const head = started ? '' : csvLine(header);
      started = true;
      callback(null, head + csvLine(toCells(item)));
    },
    flush(callback) {
      // An export with no match is its header alone.
      callback(null, started ? '' : csvLine(header));
    },
  });
}
