import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { CSV_COLUMNS } from '../../../tray-service/admin/events-router.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp, eventDoc, expiresAtOf, storeEvents } from './admin-fixtures.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** The cells of CSV text (RFC 4180: quoted cells may hold commas, quotes and line breaks). */
function parseCsv(body: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') ((cell += '"'), i++);
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') (row.push(cell), (cell = ''));
    else if (c === '\r' && body[i + 1] === '\n')
      (row.push(cell), rows.push(row), (row = []), (cell = ''), i++);
    else cell += c;
  }
  return rows;
}

describe('GET /admin/events/export?format=csv', () => {
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  const hostile = eventDoc({
    key: 'csv-1',
    event: '=cmd|"/c calc"!A1',
    webhook: '@SUM(1+1)',
    receivedAt: new Date('2026-11-20T10:00:00Z'),
    status: 'invalid',
    error: '-2+3, and "quotes"\nand a line break',
    data: { text: '=1+1', list: [1, 2] },
  });
  const plain = eventDoc({ key: 'csv-2', receivedAt: new Date('2026-11-20T11:00:00Z') });

  before(async () => {
    await storeEvents(suite.storage, [hostile, plain]);
    ({ app, close } = adminApp(suite.storage));
  });
  after(() => close());

  it('streams a header and one line per event, newest first, as an attachment', async () => {
    const res = await request(app).get('/admin/events/export?format=csv').set(admin).expect(200);
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).to.equal('attachment; filename="events.csv"');
    const rows = parseCsv(res.text);
    expect(rows[0]).to.deep.equal([...CSV_COLUMNS]);
    expect(rows.slice(1).map((row) => row[0])).to.deep.equal(['csv-2', 'csv-1']);
    const plainRow = Object.fromEntries(CSV_COLUMNS.map((column, i) => [column, rows[1]![i]]));
    expect(plainRow).to.include({
      key: 'csv-2',
      event: 'post.didCreate',
      status: 'stored',
      receivedAt: '2026-11-20T11:00:00.000Z',
      expiresAt: expiresAtOf(plain),
      error: '',
    });
    expect(JSON.parse(plainRow.data!)).to.deep.equal(plain.data);
  });

  it('starts every cell a spreadsheet would run as a formula with a quote', async () => {
    const res = await request(app)
      .get('/admin/events/export?format=csv&status=invalid')
      .set(admin)
      .expect(200);
    const [, row] = parseCsv(res.text);
    const cells = Object.fromEntries(CSV_COLUMNS.map((column, i) => [column, row![i]]));
    expect(cells).to.include({
      event: `'=cmd|"/c calc"!A1`,
      webhook: "'@SUM(1+1)",
      error: `'-2+3, and "quotes"\nand a line break`,
    });
    for (const cell of row!) expect(cell, cell).to.not.match(/^[=+\-@\t\r]/);
  });

  it('keeps NDJSON the default, and refuses another format naming it', async () => {
    const ndjson = await request(app).get('/admin/events/export').set(admin).expect(200);
    expect(ndjson.headers['content-type']).to.match(/^application\/x-ndjson/);
    const res = await request(app).get('/admin/events/export?format=xlsx').set(admin).expect(400);
    expect(res.body.message).to.equal('format: expected ndjson or csv');
  });
});
