import { expect } from 'chai';
import { CHUNK_FRAMING_BYTES, createTailBacklog } from '../../../tray-service/admin/tail-backlog.ts';

const framed = (bytes: number) => bytes + CHUNK_FRAMING_BYTES;

describe('createTailBacklog', () => {
  it('counts nothing against the reader for the message it is taking, however large', () => {
    const backlog = createTailBacklog();
    backlog.wrote(8_000_000);
    expect(backlog.behind(framed(8_000_000))).to.equal(0);
    expect(backlog.behind(1)).to.equal(0);
  });

  it('counts what was written after the message being sent', () => {
    const backlog = createTailBacklog();
    backlog.wrote(8_000_000);
    backlog.wrote(100);
    backlog.wrote(200);
    expect(backlog.behind(framed(100) + framed(200) + 5)).to.equal(framed(100) + framed(200));
  });

  it('forgets the messages sent whole, so the next one being sent is not counted', () => {
    const backlog = createTailBacklog();
    backlog.wrote(100);
    backlog.wrote(8_000_000);
    backlog.wrote(50);
    // The first is sent and the large one is on its way: only the last waits behind it.
    expect(backlog.behind(framed(8_000_000) - 10 + framed(50))).to.equal(framed(50));
    expect(backlog.behind(framed(50) + 10)).to.equal(framed(50));
    // The large one is sent too: the last is the one being sent.
    expect(backlog.behind(framed(50) - 10)).to.equal(0);
  });

  it('counts nothing once everything is sent', () => {
    const backlog = createTailBacklog();
    backlog.wrote(100);
    backlog.wrote(100);
    expect(backlog.behind(0)).to.equal(0);
  });
});
