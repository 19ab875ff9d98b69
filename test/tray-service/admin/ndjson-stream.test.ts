import { expect } from 'chai';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { ndjsonStream } from '../../../tray-service/admin/ndjson-stream.ts';
import { acceptedWhileStalled } from './accepted-while-stalled.ts';

describe('NDJSON export lines', () => {
  it('stream one JSON line per item', async () => {
    const lines = await text(Readable.from([{ a: 1 }, { b: 'two\n' }]).pipe(ndjsonStream((item) => item)));
    expect(lines).to.equal('{"a":1}\n{"b":"two\\n"}\n');
  });

  // The storage pages an export by bytes (16 MiB); a stage that held 64 items while its reader
  // stalled held 64 payloads of up to WEBHOOK_MAX_BODY_BYTES each besides.
  it('take one item more at most while their reader stalls, however large the items', () => {
    const stage = ndjsonStream((item: { data: string }) => item);
    expect(acceptedWhileStalled(stage, { data: 'x'.repeat(1_000_000) })).to.be.at.most(1);
  });
});
