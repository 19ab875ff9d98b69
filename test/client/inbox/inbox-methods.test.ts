import { expect } from 'chai';
import { createTrayClient, TrayApiError, type NotificationRecord } from '../../../client/src/index.ts';
import { useClientTarget } from '../support/client-target.ts';
import { useScriptedServers } from '../support/scripted-servers.ts';

const MIN = 60_000;

describe('the client’s inbox methods against the tray API (real PostgreSQL and Redis)', function () {
  this.timeout(30_000);
  const target = useClientTarget();
  const clientOf = (userId: string) =>
    createTrayClient({ baseUrl: target.baseUrl, getToken: () => target.token(userId) });
  const targets = (records: readonly NotificationRecord[]) => records.map((record) => record.targetId);
  const all = async (user: string, view?: 'inbox' | 'archived' | 'snoozed' | 'all') => {
    const records: NotificationRecord[] = [];
    for await (const record of clientOf(user).history({ ...(view ? { view } : {}) })) records.push(record);
    return records;
  };

  describe('seen, archive and snooze', () => {
    const user = target.user('inbox-user');
    const keys = { a: `comment_a_${user}`, b: `comment_b_${user}`, c: `comment_c_${user}` };
    before(async () => {
      const now = Date.now();
      await target.seed(user, [
        { targetId: 'a', at: now - 3 * MIN },
        { targetId: 'b', at: now - 2 * MIN, read: true },
        { targetId: 'c', at: now - MIN },
      ]);
    });

    it('markSeen() marks records seen and counts() says how many are unseen', async () => {
      const client = clientOf(user);
      expect((await client.counts()).totalUnseenCount).to.equal(2);
      expect(await client.markSeen([keys.a, 'not-a-record'])).to.equal(1);
      expect(await client.markSeen([keys.a])).to.equal(0);
      expect(await client.counts()).to.deep.equal({ totalUnreadCount: 2, totalUnseenCount: 1 });
    });

    it('archive() and unarchive() move records out of the inbox view and back', async () => {
      const client = clientOf(user);
      expect(await client.archive([keys.c])).to.equal(1);
      expect(targets(await all(user))).to.deep.equal(['b', 'a']);
      expect(targets(await all(user, 'archived'))).to.deep.equal(['c']);
      const page = await client.historyPage(undefined, 'archived');
      expect(targets(page.data)).to.deep.equal(['c']);
      expect(page.data[0]?.archivedAt).to.be.a('number');
      expect(await client.unarchive([keys.c])).to.equal(1);
      expect(targets(await all(user))).to.deep.equal(['c', 'b', 'a']);
    });

    it('archive("all-read") archives only the read records', async () => {
      const client = clientOf(user);
      expect(await client.archive('all-read')).to.equal(1);
      expect(targets(await all(user, 'archived'))).to.deep.equal(['b']);
      expect(await client.unarchive([keys.b])).to.equal(1);
    });

    it('snooze() takes records out until a time; unsnooze() brings them back now', async () => {
      const client = clientOf(user);
      expect(await client.snooze([keys.a], new Date(Date.now() + 60 * MIN))).to.equal(1);
      expect(targets(await all(user, 'snoozed'))).to.deep.equal(['a']);
      expect(targets(await all(user))).to.deep.equal(['c', 'b']);
      expect(await client.unsnooze([keys.a])).to.equal(1);
      expect(targets(await all(user, 'all'))).to.deep.equal(['c', 'b', 'a']);
    });

    it('a snooze into the past is a TrayApiError 400 naming until', async () => {
      await expect(clientOf(user).snooze([keys.a], Date.now() - MIN))
        .to.be.rejectedWith(TrayApiError, /until/)
        .and.eventually.include({ status: 400, code: 400001 });
    });

    /** A client whose getToken answers after 600 ms, counting the calls it sends. */
    const slowTokenClient = () => {
      const sent = { count: 0 };
      const client = createTrayClient({
        baseUrl: target.baseUrl,
        getToken: async () => {
          await new Promise((resolve) => setTimeout(resolve, 600));
          return target.token(user);
        },
        fetch: (input, init) => ((sent.count += 1), fetch(input, init)),
      });
      return { client, sent };
    };

    // Sent after its `until`, the service would refuse it with a 400 that blames the caller's time.
    it('a snooze whose until passes while getToken answers is not sent', async () => {
      const { client, sent } = slowTokenClient();
      await expect(client.snooze([keys.a], Date.now() + 300)).to.be.rejected.and.eventually.include({
        name: 'TimeoutError',
      });
      expect(sent.count).to.equal(0);
    });

    // The service reads forms Date.parse does not (±hh, a `,` fraction, the basic form): timed by
    // Date.parse, such an `until` had no window, and the call was sent after it.
    it('times an until string as the service reads it, in every form it takes', async () => {
      const soon = () => new Date(Date.now() + 300).toISOString();
      const forms = [
        (iso: string) => iso.replace('.', ',').replace('Z', '+00'),
        (iso: string) => iso.replace(/[-:]/g, ''),
      ];
      for (const form of forms) {
        const { client, sent } = slowTokenClient();
        const until = form(soon());
        await expect(client.snooze([keys.a], until), until).to.be.rejected.and.eventually.include({
          name: 'TimeoutError',
        });
        expect(sent.count, until).to.equal(0);
      }
    });
  });

  describe('mutes', () => {
    it('mute() puts one, mutes() lists it, unmute() lifts it', async () => {
      const client = clientOf(target.user('muting-user'));
      const until = Date.now() + 60 * MIN;
      const mute = await client.mute({ targetType: 'post', targetId: 'p-1', until: new Date(until) });
      expect(mute).to.include({ targetType: 'post', targetId: 'p-1', until });
      expect(await client.mute({ targetType: 'user', targetId: 'u-loud' })).to.include({ until: null });
      expect((await client.mutes()).map((one) => one.targetId).sort()).to.deep.equal(['p-1', 'u-loud']);
      expect(await client.unmute({ targetType: 'post', targetId: 'p-1' })).to.equal(true);
      expect(await client.unmute({ targetType: 'post', targetId: 'p-1' })).to.equal(false);
      expect((await client.mutes()).map((one) => one.targetId)).to.deep.equal(['u-loud']);
    });

    // JSON writes NaN and Infinity as null, and a null `until` is a mute without end: an invalid
    // Date (say, from a user's typo) muted for good, with no error.
    it('refuses an until that is no time (an invalid Date, NaN, Infinity), muting and snoozing nothing', async () => {
      const client = clientOf(target.user('invalid-until-user'));
      for (const until of [new Date('not a date'), Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(client.mute({ targetType: 'post', targetId: 'p-typo', until })).to.be.rejectedWith(
          TypeError,
          /until/,
        );
        await expect(client.snooze(['k'], until)).to.be.rejectedWith(TypeError, /until/);
      }
      expect(await client.mutes()).to.deep.equal([]);
    });

    // The service takes whole milliseconds only: a time made from performance.now() was sent, and
    // came back as a 400 about the request's body rather than the argument.
    it('refuses an until of a fraction of a millisecond, naming it, muting and snoozing nothing', async () => {
      const client = clientOf(target.user('fractional-until-user'));
      const until = Date.now() + 60 * MIN + 0.5;
      const message = `until: expected whole milliseconds, got ${String(until)}`;
      await expect(client.mute({ targetType: 'post', targetId: 'p-half', until })).to.be.rejectedWith(
        TypeError,
        message,
      );
      await expect(client.snooze(['k'], until)).to.be.rejectedWith(TypeError, message);
      expect(await client.mutes()).to.deep.equal([]);
    });

    it('mute() extends a mute mutes() gave, sending only the fields the service takes', async () => {
      const client = clientOf(target.user('extending-user'));
      await client.mute({ targetType: 'post', targetId: 'p-2', until: new Date(Date.now() + 60 * MIN) });
      const [listed] = await client.mutes();
      if (!listed) throw new Error('the mute is not listed');
      const later = Date.now() + 120 * MIN;
      expect(await client.mute({ ...listed, until: new Date(later) })).to.include({
        targetId: 'p-2',
        until: later,
      });
      expect(await client.mute(listed)).to.include({ targetId: 'p-2' });
    });
  });
});

// A DELETE's body is dropped by some proxies and gateways: the mute to lift went missing on the
// way, and the service answered 400 for a call the app made right.
describe('the client’s unmute, as sent (a scripted server)', () => {
  const servers = useScriptedServers();
  it('names the mute in the query and sends no body', async () => {
    const seen: { method?: string; url?: string; body: string; type?: string }[] = [];
    const baseUrl = await servers.serve((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, body, type: req.headers['content-type'] });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ data: { removed: true } }));
      });
    });
    const client = createTrayClient({ baseUrl, getToken: () => 'a-token' });
    expect(await client.unmute({ targetType: 'post', targetId: 'p 1&x' })).to.equal(true);
    expect(seen).to.deep.equal([
      {
        method: 'DELETE',
        url: '/notifications/v3/mutes?targetType=post&targetId=p+1%26x',
        body: '',
        type: undefined,
      },
    ]);
  });
});
