import { expect } from 'chai';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { csvCell, csvLine, csvStream } from '../../../tray-service/admin/csv-stream.ts';
import { acceptedWhileStalled } from './accepted-while-stalled.ts';

describe('CSV export cells', () => {
  it('start a cell a spreadsheet would run as a formula with a quote (CSV injection)', () => {
    for (const [value, safe] of [
      ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
      ['+1+2', "'+1+2"],
      ['-2+3', "'-2+3"],
      ['@SUM(A1)', "'@SUM(A1)"],
      ['\t=1', "'\t=1"],
      // And after the carriage return, where a row may start.
      ['\r=1', `"'\r'=1"`],
      // Spaces before the sign (some spreadsheets trim them), and the full-width signs (some read
      // them as the ASCII ones).
      [' =1+1', "' =1+1"],
      ['  @SUM(A1)', "'  @SUM(A1)"],
      ['\uFF1D1+1', "'\uFF1D1+1"],
      ['\uFF0B1', "'\uFF0B1"],
      ['\uFF0D1', "'\uFF0D1"],
      ['\uFF20SUM(A1)', "'\uFF20SUM(A1)"],
    ] as const) {
      expect(csvCell(value), JSON.stringify(value)).to.equal(safe);
    }
  });
  it('start what follows a semicolon with a quote too, where a spreadsheet of a `;` locale would split the cell', () => {
    for (const [value, safe] of [
      ["x;=cmd|' /C calc'!A0;", "x;'=cmd|' /C calc'!A0;"],
      ['a; +1;b;@SUM(A1)', "a;' +1;b;'@SUM(A1)"],
      ['=1;-2', "'=1;'-2"],
      // Quoted, the cell's quotes are doubled: a lenient parser may drop them and keep the sign.
      ['x;"=HYPERLINK(1)', '"x;\'""=HYPERLINK(1)"'],
      ['x; " +1', '"x;\' "" +1"'],
      ['"=1;x', '"\'""=1;x"'],
    ] as const) {
      expect(csvCell(value), JSON.stringify(value)).to.equal(safe);
      // Split as such a spreadsheet splits it: no piece starts a formula, also with its quotes dropped.
      for (const piece of csvCell(value).split(';'))
        expect(piece.replaceAll('"', ''), JSON.stringify(value)).to.not.match(/^[ ]*[=+\-@\t\r]/);
    }
    expect(csvCell('a;b')).to.equal('a;b');
  });
  // Such a spreadsheet also starts a row at a line break inside a quoted cell.
  it('start what follows a line break inside a cell with a quote too', () => {
    for (const [value, safe] of [
      ['c-1\r\n=1+1;x', '"c-1\r\n\'=1+1;x"'],
      ['c-1\n @SUM(A1)', '"c-1\n\' @SUM(A1)"'],
      ['c-1\r+1', '"c-1\r\'+1"'],
    ] as const) {
      expect(csvCell(value), JSON.stringify(value)).to.equal(safe);
      for (const piece of csvCell(value).split(/[;\r\n]/))
        expect(piece.replaceAll('"', ''), JSON.stringify(value)).to.not.match(/^[ ]*[=+\-@\t]/);
    }
    expect(csvCell('two\nlines')).to.equal('"two\nlines"');
  });
  it('leave other cells as they are, quoting those with a quote, comma or line break (RFC 4180)', () => {
    expect(csvCell('post.didCreate')).to.equal('post.didCreate');
    expect(csvCell('a=b')).to.equal('a=b');
    expect(csvCell('')).to.equal('');
    expect(csvCell('a,b')).to.equal('"a,b"');
    expect(csvCell('say "hi"')).to.equal('"say ""hi"""');
    expect(csvCell('two\nlines')).to.equal('"two\nlines"');
    expect(csvLine(['a', 'b,c'])).to.equal('a,"b,c"\r\n');
  });
  it('stream the header line, then a line per item; a header alone when there is none', async () => {
    const csv = (items: string[][]) =>
      text(Readable.from(items).pipe(csvStream(['x', 'y'], (item: string[]) => item)));
    expect(
      await csv([
        ['1', '2'],
        ['=3', '4'],
      ]),
    ).to.equal("x,y\r\n1,2\r\n'=3,4\r\n");
    expect(await csv([])).to.equal('x,y\r\n');
  });

  // The storage pages an export by bytes (16 MiB); a stage that held 64 items while its reader
  // stalled held 64 payloads of up to WEBHOOK_MAX_BODY_BYTES each besides.
  it('takes one item more at most while its reader stalls, however large the items', () => {
    const stage = csvStream(['data'], (item: string[]) => item);
    expect(acceptedWhileStalled(stage, ['x'.repeat(1_000_000)])).to.be.at.most(1);
  });
});
