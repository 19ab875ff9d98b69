import { expect } from 'chai';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';
import type { PageKey } from '../../../tray-service/domain/page-cursor.ts';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { EVENTS } from '../../../tray-service/storage/mongodb/collections/collection-names.ts';
import {
  STREAM_BATCH,
  STREAM_PAGE_BYTES,
  streamEvents,
} from '../../../tray-service/storage/stream-events.ts';
import { useTrayStorage, type SuiteStorage } from '../../support/use-tray-storage.ts';
import { REQUIRED_ENGINES } from './conformance/conformance-adapters.ts';

const MINUTE = 60_000;
/**
 * `n` seconds before the minute the suite started in: one minute for every event, whenever it is
 * stored (read at each call, a minute turning while the large events were stored made the later
 * ones the newest, and the order the test expects was not the order stored).
 */
const suiteMinute = Math.floor(Date.now() / MINUTE) * MINUTE;
const receivedAt = (n: number) => new Date(suiteMinute - (n + 1) * 1_000);

describe('storage/stream-events', () => {
  it('asks every page for STREAM_BATCH events at most and STREAM_PAGE_BYTES of payloads, after the last one', async () => {
    const asked: unknown[] = [];
    const event = (key: string) => ({ key, receivedAt: new Date(0) }) as StoredEvent;
    const list = async (_filter: object, limit: number, after?: PageKey, options?: { maxBytes?: number }) => {
      asked.push([limit, after?.id, options]);
      return asked.length === 1
        ? { items: [event('a')], next: { at: new Date(0), id: 'a' } }
        : { items: [event('b')] };
    };
    const keys: string[] = [];
    for await (const one of streamEvents(list, {}, { at: new Date(0), id: 'from' })) keys.push(one.key);
    expect(keys).to.deep.equal(['a', 'b']);
    expect(asked).to.deep.equal([
      [STREAM_BATCH, 'from', { maxBytes: STREAM_PAGE_BYTES }],
      [STREAM_BATCH, 'a', { maxBytes: STREAM_PAGE_BYTES }],
    ]);
  });
});

/** Drops the stored payload sizes of `keys`, as events stored before sizes were kept have none. */
async function forgetSizes(suite: SuiteStorage, keys: string[]): Promise<void> {
  if (suite.engine === 'postgres') {
    const client = new pg.Client({ connectionString: suite.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query('UPDATE stored_events SET data_bytes = NULL WHERE key = ANY($1::text[])', [keys]);
    } finally {
      await client.end();
    }
    return;
  }
  const client = await MongoClient.connect(suite.env.MONGODB_URI ?? '');
  try {
    await client
      .db(suite.env.MONGODB_DB)
      .collection<{ _id: string }>(EVENTS)
      .updateMany({ _id: { $in: keys } }, { $unset: { bytes: '' } });
  } finally {
    await client.close();
  }
}

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

    it('pages events stored before sizes were kept: every event once, in order', async () => {
      // As a release before sizes stored them: PostgreSQL then counts the stored size (compressed),
      // MongoDB none.
      await forgetSizes(suite, ['big-0', 'big-1', 'big-2', 'big-3']);
      const bounded = await pages(500 * KB);
      expect(bounded.flat()).to.deep.equal(every);
      expect(bounded.length, 'pages').to.be.below(6);
    });

    it('streams every event once, newest first', async () => {
      const streamed: string[] = [];
      for await (const event of suite.storage.events.stream({ webhook: 'wh' })) streamed.push(event.key);
      expect(streamed).to.deep.equal(every);
    });
  });
}
