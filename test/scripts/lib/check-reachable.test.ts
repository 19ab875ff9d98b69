import { expect } from 'chai';
import { checkReachable } from '../../../scripts/lib/check-reachable.ts';

describe('checkReachable', () => {
  it('names what is unreachable and why in one line, never a password in the URL', async () => {
    for (const url of ['http://127.0.0.1:9/healthz', 'http://ops:hunter2@127.0.0.1:9/healthz']) {
      const error = await checkReachable('receiver', url, '--receiver').then(
        () => undefined,
        (thrown: unknown) => thrown as Error,
      );
      expect(error?.message, url).to.match(
        /^cannot reach the receiver at http:\/\/(\*\*\*@)?127\.0\.0\.1:9\/healthz \(/,
      );
      expect(error?.message, url).to.include('--receiver say where it is');
      expect(error?.message, url).not.to.include('hunter2');
    }
  });
});
