import { expect } from 'chai';
import { PartialWriteError } from '../../../tray-service/storage/port.ts';
import { writeAndAnnounce } from '../../../tray-service/use-cases/write-and-announce.ts';

// The announcement's failure is the publisher's to record, never the call's: the write has changed
// the records already, and an error answered then would tell a client its mark did not happen.
describe('writeAndAnnounce', () => {
  const failing = async () => {
    throw new Error('publisher down');
  };

  it('answers the records a write changed though announcing them failed', async () => {
    const a = { key: 'a' };
    const b = { key: 'b' };
    const changed = await writeAndAnnounce(async (tell) => {
      await tell([a]);
      return [a, b];
    }, failing);
    expect(changed).to.deep.equal([a, b]);
  });

  it('fails with the write’s own failure when it stopped part-way, whatever the announcement did', async () => {
    const cause = new Error('connection lost');
    const error = await writeAndAnnounce(async () => {
      throw new PartialWriteError([{ key: 'a' }], cause);
    }, failing).catch((caught: unknown) => caught);
    expect(error).to.equal(cause);
  });
});
