import { expect } from 'chai';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';
import type { PageKey } from '../../../tray-service/domain/page-cursor.ts';
import { STREAM_PAGE_BYTES } from '../../../tray-service/storage/stream-events.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { REQUIRED_ENGINES } from './conformance/conformance-adapters.ts';

const MINUTE = 60_000;
const receivedAt = (n: number) => new Date(Math.floor(Date.now() / MINUTE) * MINUTE - (n + 1) * 1_000);

// An export or a replay holds one page of events at a time: 500 of them, or fewer when their
// payloads are large, so a page of megabyte payloads does not take half a gigabyte.
for (const engine of REQUIRED_ENGINES) {
  describe(`stored events read page by page, bounded by their payloads' bytes, on ${engine}`, function () {
    this.timeout(60_000);
    const suite = useTrayStorage(engine);
    const KB = 1024;
    /** Ten events of about 200 kB each, `big-0` the newest, and one of 700 kB, the oldest. */
    before(async () => {
      const sizes = [...Array.from({ length: 10 }, () => 200 * KB), 700 * KB];
      for (const [n, size] of sizes.entries()) {
        const at = receivedAt(n);
        await suite.storage.events.store(
          {
            key: `big-${n}`,
            event: 'post.didCreate',
            data: { text: 'x'.repeat(size) },
            webhook: 'wh',
            receivedAt: at,
          },
          { status: 'stored' },
          { retentionDays: 7, now: at },
        );
      }
    });

    /** Every page of `maxBytes` (and `limit`), as their keys. */
    async function pages(maxBytes: number | undefined, limit = 500): Promise<string[][]> {
      const seen: string[][] = [];
      let after: PageKey | undefined;
      do {
        const page = await suite.storage.events.list(
          { webhook: 'wh' },
          limit,
          after,
          maxBytes === undefined ? {} : { maxBytes },
        );
        seen.push(page.items.map((event: StoredEvent) => event.key));
        after = page.next;
      } while (after);
      return seen;
    }
    const every = Array.from({ length: 11 }, (_, n) => `big-${n}`);

    it('takes as many events as their bytes fit, one at least, and every event once in order', async () => {
      const bounded = await pages(500 * KB);
      expect(bounded.flat()).to.deep.equal(every);
      // Two of 200 kB fit in 500 kB, three do not; the 700 kB one is a page alone.
      expect(bounded.map((page) => page.length)).to.deep.equal([2, 2, 2, 2, 2, 1]);
      expect(bounded.at(-1)).to.deep.equal(['big-10']);
    });

    it('takes every event of the limit when they fit, and the limit still bounds a page', async () => {
      expect(await pages(STREAM_PAGE_BYTES)).to.deep.equal([every]);
      expect((await pages(STREAM_PAGE_BYTES, 4)).map((page) => page.length)).to.deep.equal([4, 4, 3]);
      expect(await pages(undefined)).to.deep.equal([every]);
    });

    it('streams every event once, newest first', async () => {
      const streamed: string[] = [];
      for await (const event of suite.storage.events.stream({ webhook: 'wh' })) streamed.push(event.key);
      expect(streamed).to.deep.equal(every);
    });
  });
}
