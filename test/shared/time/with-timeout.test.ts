import { expect } from 'chai';
import { TimeoutError } from '../../../shared/errors/timeout-error.ts';
import { withTimeout } from '../../../shared/time/with-timeout.ts';

describe('withTimeout (shared/time/with-timeout.ts)', () => {
  it('settles with the operation when it finishes within the budget', async () => {
    expect(await withTimeout(Promise.resolve(7), 50)).to.equal(7);
  });

  it("passes on the operation's own rejection", async () => {
    await expect(withTimeout(Promise.reject(new Error('refused')), 50)).to.be.rejectedWith('refused');
  });

  it('rejects with a TimeoutError naming the budget, or carrying the given message', async () => {
    const never = new Promise<never>(() => undefined);
    await expect(withTimeout(never, 10)).to.be.rejectedWith(TimeoutError, 'timed out after 10 ms');
    await expect(withTimeout(never, 10, 'cannot reach Redis')).to.be.rejectedWith(
      TimeoutError,
      'cannot reach Redis',
    );
  });
});
