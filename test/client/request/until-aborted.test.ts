import { expect } from 'chai';
import { untilAborted } from '../../../client/src/request/until-aborted.ts';
import { unhandledRejectionsOf } from '../../support/unhandled-rejections.ts';

describe('untilAborted', () => {
  // A signal that aborts between a 401 and the next token: the token asked for is dropped, and
  // its failure must not be an unhandled rejection (which ends a Node process).
  it('given a signal aborted already, rejects with its reason and leaves no rejection unhandled', async () => {
    const unhandled = await unhandledRejectionsOf(async () => {
      const reason = new Error('left the page');
      const token = new Promise<string>((_resolve, reject) =>
        setTimeout(() => reject(new Error('token service down')), 10),
      );
      await expect(untilAborted(token, AbortSignal.abort(reason))).to.be.rejectedWith(reason);
    }, 50);
    expect(unhandled).to.deep.equal([]);
  });

  it('settles to the value when the signal does not abort, and to the abort when it does first', async () => {
    expect(await untilAborted(Promise.resolve('t'), new AbortController().signal)).to.equal('t');
    const controller = new AbortController();
    const pending = untilAborted(new Promise<string>(() => undefined), controller.signal);
    controller.abort(new Error('now'));
    await expect(pending).to.be.rejectedWith('now');
  });
});
