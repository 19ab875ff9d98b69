import { randomBytes, randomInt } from 'node:crypto';
import { expect } from 'chai';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import { encodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import { applyJob, type JobDelivery } from '../../../tray-service/use-cases/apply-job.ts';
import type { EventOutcome } from '../../../tray-service/storage/port.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { REQUIRED_ENGINES } from '../storage/conformance/conformance-adapters.ts';
import {
  BASE_TIME,
  commentDeleteEvent,
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  postDeleteEvent,
  postEvent,
  reactionEvent,
  reactionRemoveEvent,
  userUpdateEvent,
  userDeleteEvent,
  type TestEnvelope,
} from '../worker/event-builder.ts';

const RETENTION_DAYS = 90;
// Recent: every record written expires after the real clock too (a MongoDB TTL index would not
// wait for the tray's clock).
const START = BASE_TIME;

/** `envelope` as the receiver queues it, received at `at`. */
function delivered(envelope: TestEnvelope, at: number): JobDelivery {
  return {
    dedupeKey: dedupeKeyOf(envelope),
    webhook: 'test-hook',
    receivedAt: new Date(at).toISOString(),
    event: envelope.event,
    data: envelope.data,
  };
}

// Whichever adapter wrote them, the live streams hear only of records readers can see.
for (const engine of REQUIRED_ENGINES) {
  describe(`applyJob on ${engine}: what the live streams are told`, () => {
    const suite = useTrayStorage(engine);

    it('never a record past its retention, though the job rewrote it (a deleted user renamed there)', async () => {
      const told: InboxRecord[] = [];
      const apply = (envelope: TestEnvelope, at: number) =>
        applyJob(delivered(envelope, at), {
          storage: suite.storage,
          eventsRetentionDays: 30,
          trayRetentionDays: RETENTION_DAYS,
          networkId: 'default',
          onWritten: async (records) => void told.push(...records),
          now: () => at,
        });
      // Ben comments on two of Ana's posts, 60 days apart; each is told when it is written.
      const comment = (postId: string, at: number) =>
        commentEvent({
          commentId: `cm-${postId}`,
          author: 'u-ben',
          postId,
          postOwner: 'u-ana',
          createdAt: new Date(at).toISOString(),
        });
      await apply(comment('p-old', START), START + 60_000);
      await apply(comment('p-new', START + 60 * DAY_MS), START + 60 * DAY_MS + 60_000);
      const keyOf = (postId: string) =>
        encodeRecordKey({ verb: 'comment', targetId: postId, userId: 'u-ana' });
      expect(told.map((record) => record.key)).to.deep.equal([keyOf('p-old'), keyOf('p-new')]);

      // Ben deletes his account after the first record expired: both records are rewritten, only the
      // one still shown is told.
      told.length = 0;
      const deletedAt = START + RETENTION_DAYS * DAY_MS + 60_000;
      await apply(userDeleteEvent('u-ben'), deletedAt);
      expect(told.map((record) => [record.key, record.actors.map((actor) => actor.name)])).to.deep.equal([
        [keyOf('p-new'), ['Deleted user']],
      ]);
      const { records } = await suite.storage.records.pageAfter('u-ana', undefined, 10, deletedAt);
      expect(records.map((record) => record.key)).to.deep.equal([keyOf('p-new')]);
    });
  });

  describe(`applyJob on ${engine}: a deleted user's block list`, () => {
    const suite = useTrayStorage(engine);

    it('goes with them, on the network the job names; blocks of them by others stay', async () => {
      const { blockList } = suite.storage;
      const [ivy, ana] = ['u-ivy-blocks', 'u-ana-blocks'];
      const owner = (networkId: string, userId: string) => `${networkId}_${userId}`;
      await blockList.block(owner('net-a', ivy), 'u-x');
      await blockList.block(owner('net-a', ivy), 'u-y');
      // Another network's list in the same store is that network's deployment's to clear.
      await blockList.block(owner('net-b', ivy), 'u-x');
      await blockList.block(owner('net-a', ana), ivy);
      await applyJob(delivered(userDeleteEvent(ivy), START), {
        storage: suite.storage,
        eventsRetentionDays: 30,
        trayRetentionDays: RETENTION_DAYS,
        networkId: 'net-a',
        now: () => START,
      });
      const page = (netidUid: string) => blockList.page(netidUid, undefined, 20);
      expect((await page(owner('net-a', ivy))).results).to.deep.equal([]);
      expect((await page(owner('net-b', ivy))).results.map((entry) => entry.blocked_userId)).to.deep.equal([
        'u-x',
      ]);
      expect((await page(owner('net-a', ana))).results.map((entry) => entry.blocked_userId)).to.deep.equal([
        ivy,
      ]);
    });
  });

  describe(`applyJob on ${engine}: the event's finish`, () => {
    const suite = useTrayStorage(engine);

    // The moderation step may fail once (a statement timeout) after the tray applied the event:
    // the retry finishes it, and only then is it announced and its lag counted, each once.
    it('is marked, counted and announced once, when a job first finishes it: after a retry of a failed moderation step', async () => {
      const envelope = commentEvent({ commentId: 'cm-finish', createdAt: new Date(START).toISOString() });
      const key = dedupeKeyOf(envelope);
      const receivedAt = START + 60_000;
      const announced: { key: string; appliedAt?: Date; moderation?: string }[] = [];
      let failing = true;
      const apply = (at: number) =>
        applyJob(delivered(envelope, receivedAt), {
          storage: suite.storage,
          eventsRetentionDays: 30,
          trayRetentionDays: RETENTION_DAYS,
          networkId: 'default',
          onStored: async () => {
            if (failing) throw new Error('moderation step failed once');
            return 'flag';
          },
          onApplied: async (event) => void announced.push(event),
          now: () => at,
        });
      await apply(receivedAt + 1_000).then(
        () => expect.fail('the failed moderation step fails the job'),
        (error: Error) => expect(error.message).to.equal('moderation step failed once'),
      );
      // Not finished: neither marked nor announced.
      expect((await suite.storage.events.get(key))?.appliedAt).to.equal(undefined);
      expect(announced).to.deep.equal([]);
      failing = false;
      expect((await apply(receivedAt + 5_000)).first).to.equal(true);
      expect(announced.map((event) => [event.key, event.appliedAt, event.moderation])).to.deep.equal([
        [key, new Date(receivedAt + 5_000), 'flag'],
      ]);
      expect((await suite.storage.events.get(key))?.appliedAt).to.deep.equal(new Date(receivedAt + 5_000));
      // A redelivery or replay finishes nothing again.
      expect((await apply(receivedAt + 9_000)).first).to.equal(false);
      expect(announced).to.have.length(1);
      const minute = new Date(Math.floor(receivedAt / 60_000) * 60_000);
      const [lag] = await suite.storage.events.lagPerMinute(minute, new Date(minute.getTime() + 60_000));
      expect(lag).to.deep.include({ count: 1, maxMs: 5_000 });
    });

    // The worker runs a job attempt again after a dropped connection. A first run whose applied
    // mark committed and whose answer was lost left the rerun told `false`: the event was never
    // counted in the worker's metrics nor announced.
    it('is first for a run of the same attempt after a run whose applied mark committed and whose answer was lost', async () => {
      const envelope = commentEvent({ commentId: 'cm-lost', createdAt: new Date(START).toISOString() });
      const key = dedupeKeyOf(envelope);
      const receivedAt = START + 60_000;
      const announced: string[] = [];
      let loseAnswer = true;
      const events: typeof suite.storage.events = Object.create(suite.storage.events);
      events.markApplied = async (...args) => {
        const marked = await suite.storage.events.markApplied(...args);
        if (!loseAnswer) return marked;
        loseAnswer = false;
        throw new Error('Connection terminated unexpectedly');
      };
      const apply = (at: number, by: string) =>
        applyJob(
          delivered(envelope, receivedAt),
          {
            storage: { ...suite.storage, events },
            eventsRetentionDays: 30,
            trayRetentionDays: RETENTION_DAYS,
            networkId: 'default',
            onApplied: async (event) => void announced.push(event.key),
            now: () => at,
          },
          { by },
        );
      await apply(receivedAt + 1_000, `${key}#0`).then(
        () => expect.fail('the lost answer fails the run'),
        (error: Error) => expect(error.message).to.equal('Connection terminated unexpectedly'),
      );
      expect(announced).to.deep.equal([]);
      expect((await apply(receivedAt + 2_000, `${key}#0`)).first).to.equal(true);
      expect(announced).to.deep.equal([key]);
      // The next attempt (the job failed after all) or a replay: not the first.
      expect((await apply(receivedAt + 3_000, `${key}#1`)).first).to.equal(false);
      expect(announced).to.deep.equal([key]);
      expect((await suite.storage.events.get(key))?.appliedAt).to.deep.equal(new Date(receivedAt + 1_000));
    });
  });

  // An older version stored the event as `unknown` (a name its mapping did not know); a replay
  // with the mapping that knows it applies it, and the admin filters must then find it too.
  describe(`applyJob on ${engine}: a replay once the mapping knows the event`, () => {
    const suite = useTrayStorage(engine);
    /** `envelope` as an older release stored it, received at `receivedAt`, with its verdict. */
    const storedAs = async (envelope: TestEnvelope, receivedAt: Date, outcome: EventOutcome) => {
      const key = dedupeKeyOf(envelope);
      await suite.storage.events.store(
        { key, event: envelope.event, data: envelope.data, webhook: 'test-hook', receivedAt },
        outcome,
        { retentionDays: 30, now: receivedAt },
      );
      return key;
    };
    /** `envelope` applied (received at `receivedAt`) with the tray's clock at `at`. */
    const apply = (envelope: TestEnvelope, receivedAt: number, at: number, storage = suite.storage) =>
      applyJob(delivered(envelope, receivedAt), {
        storage,
        eventsRetentionDays: 30,
        trayRetentionDays: RETENTION_DAYS,
        networkId: 'default',
        now: () => at,
      });

    it('stores the new verdict with its user and community, counts nothing twice, and a late join finds the post', async () => {
      await apply(
        membershipEvent('join', ['u-m1'], 'c-rp', new Date(START - 600_000).toISOString()),
        START,
        START + 1_000,
      );
      const post = postEvent({
        postId: 'p-rp',
        communityId: 'c-rp',
        author: 'u-au',
        createdAt: new Date(START + 60_000).toISOString(),
      });
      const receivedAt = new Date(START + 120_000);
      const key = await storedAs(post, receivedAt, { status: 'unknown' });
      const firstApplied = new Date(receivedAt.getTime() + 1_000);
      expect(await suite.storage.events.markApplied({ key, receivedAt }, firstApplied)).to.equal(true);

      const replayed = await apply(post, receivedAt.getTime(), receivedAt.getTime() + 3_600_000);
      expect(replayed.first, 'finished before').to.equal(false);
      const expected = { status: 'applied', userId: 'u-au', communityId: 'c-rp', appliedAt: firstApplied };
      expect(replayed.event).to.deep.include(expected);
      const stored = await suite.storage.events.get(key);
      expect(stored).to.deep.include(expected);
      expect(stored).not.to.have.property('error');
      expect(
        (await suite.storage.events.list({ status: 'applied', userId: 'u-au' }, 10)).items,
      ).to.have.length(1);
      expect((await suite.storage.events.list({ status: 'unknown' }, 10)).items).to.deep.equal([]);

      // The charts count the event once: one receipt, one finish.
      const minute = new Date(Math.floor(receivedAt.getTime() / 60_000) * 60_000);
      const until = new Date(minute.getTime() + 60_000);
      expect((await suite.storage.events.perMinute(minute, until)).map((m) => m.counts)).to.deep.equal([
        { 'post.didCreate': 1 },
      ]);
      expect((await suite.storage.events.lagPerMinute(minute, until)).map((m) => m.count)).to.deep.equal([1]);

      // The member got the post, and a join before it, processed after the replay, backfills it.
      const now = receivedAt.getTime() + 7_200_000;
      expect(await suite.storage.records.count('u-m1', now)).to.equal(1);
      await apply(membershipEvent('join', ['u-m2'], 'c-rp', new Date(START).toISOString()), now, now + 1_000);
      expect(await suite.storage.records.count('u-m2', now + 2_000)).to.equal(1);
    });

    // A date more than a day past its receipt counts from the receipt (event-time.ts). A delivery
    // of an event stored before (the platform's again, past the dedupe window) is dated by the
    // receipt stored, as a replay is: by its own, the record moved as if something new happened.
    it('dates an event stored before by its first receipt, not by a later delivery’s', async () => {
      await apply(
        membershipEvent('join', ['u-m3'], 'c-late', new Date(START - 600_000).toISOString()),
        START,
        START + 1_000,
      );
      const post = postEvent({
        postId: 'p-late',
        communityId: 'c-late',
        author: 'u-au',
        createdAt: '2099-01-01T00:00:00.000Z',
      });
      const firstReceipt = START + 200_000;
      await apply(post, firstReceipt, firstReceipt + 1_000);
      const lastUpdate = async () =>
        (await suite.storage.records.pageAfter('u-m3', undefined, 10, firstReceipt + 3 * DAY_MS)).records.map(
          (record) => record.lastUpdate,
        );
      expect(await lastUpdate()).to.deep.equal([firstReceipt]);
      const again = firstReceipt + 2 * DAY_MS;
      await apply(post, again, again + 1_000);
      expect(await lastUpdate()).to.deep.equal([firstReceipt]);
    });

    it('keeps a stored `applied` verdict whatever the mapping says now', async () => {
      const comment = commentEvent({ commentId: 'cm-kept', postId: 'p-kept', author: 'u-cid' });
      const receivedAt = new Date(START + 180_000);
      // Stored `applied` with no user: a replay finds the verdict standing and writes nothing.
      const key = await storedAs(comment, receivedAt, { status: 'applied' });
      const replayed = await apply(comment, receivedAt.getTime(), receivedAt.getTime() + 60_000);
      expect(replayed.event.status).to.equal('applied');
      expect(replayed.event).not.to.have.property('userId');
      expect(await suite.storage.events.get(key)).not.to.have.property('userId');
    });

    it('keeps the old verdict of a replay that failed on the way, so replaying the same filter again finds it', async () => {
      const comment = commentEvent({ commentId: 'cm-fails', postId: 'p-fails', author: 'u-dee' });
      const receivedAt = new Date(START + 240_000);
      const key = await storedAs(comment, receivedAt, {
        status: 'invalid',
        error: 'comment.userId: expected an id',
      });
      const at = receivedAt.getTime() + 60_000;
      // Its personal write fails (storage lost for a moment): a replay is not retried.
      const failing = {
        ...suite.storage,
        writes: {
          ...suite.storage.writes,
          applyPersonal: () => Promise.reject(new Error('storage lost for a moment')),
        },
      };
      await apply(comment, receivedAt.getTime(), at, failing).then(
        () => expect.fail('the replay fails'),
        (error: Error) => expect(error.message).to.equal('storage lost for a moment'),
      );
      expect(await suite.storage.events.get(key)).to.deep.include({ status: 'invalid' });
      expect((await suite.storage.events.list({ status: 'invalid' }, 10)).items.map((e) => e.key)).to.include(
        key,
      );

      // Replayed again: applied, its old error gone.
      const replayed = await apply(comment, receivedAt.getTime(), at);
      expect(replayed.event).to.deep.include({ status: 'applied', userId: 'u-dee' });
      const stored = await suite.storage.events.get(key);
      expect(stored).to.deep.include({ status: 'applied', userId: 'u-dee' });
      expect(stored).not.to.have.property('error');
      expect(await suite.storage.records.count('u-ana', at + 60_000)).to.be.above(0);
    });

    it('leaves an event the mapping still does not know as it was', async () => {
      const unknown = { event: 'widget.didSpin', data: { widget: { userId: 'u-eve' } } };
      const receivedAt = new Date(START + 300_000);
      const key = await storedAs(unknown, receivedAt, { status: 'unknown' });
      const before = await suite.storage.events.get(key);
      const replayed = await apply(unknown, receivedAt.getTime(), receivedAt.getTime() + 60_000);
      expect(replayed.event).to.deep.equal(before);
      expect(await suite.storage.events.get(key)).to.deep.include({ status: 'unknown' });
    });
  });

  describe(`applyJob on ${engine}: an event larger than a document may be`, () => {
    const suite = useTrayStorage(engine);

    // WEBHOOK_MAX_BODY_BYTES may allow 64 MB, and a JSON array of numbers grows about sixfold in
    // BSON: such an event must still be applied and stored, never fail its job on every attempt.
    it('is applied to the tray and stored, and its job completes', async function () {
      this.timeout(120_000);
      const deps = {
        storage: suite.storage,
        eventsRetentionDays: 30,
        trayRetentionDays: RETENTION_DAYS,
        networkId: 'default',
      };
      await applyJob(delivered(membershipEvent('join', ['u-ben'], 'c-big'), START), deps);
      const post = postEvent({
        postId: 'p-big',
        communityId: 'c-big',
        createdAt: new Date(START + 60_000).toISOString(),
      });
      // 3 MB of JSON, about 18 MB of BSON: over MongoDB's 16 MiB document limit.
      post.data.attachments = new Array<number>(1_500_000).fill(0);
      const { event: stored } = await applyJob(delivered(post, START + 120_000), deps);
      expect(stored).to.deep.include({ key: dedupeKeyOf(post), event: 'post.didCreate', status: 'applied' });
      expect((await suite.storage.events.get(dedupeKeyOf(post)))?.status).to.equal('applied');
      const { records } = await suite.storage.records.pageAfter('u-ben', undefined, 10, START + 180_000);
      expect(records.map((record) => [record.verb, record.lastActionId])).to.deep.equal([['post', 'p-big']]);
    });
  });

  describe(`applyJob on ${engine}: text that is not well-formed UTF-16`, () => {
    const suite = useTrayStorage(engine);

    // JSON may carry a lone surrogate ("\ud83d", half an emoji cut by a sender's truncation);
    // PostgreSQL's jsonb refuses one, and MongoDB's UTF-8 cannot hold it either. Such an event must
    // be applied and stored with U+FFFD in its place, never fail its job on every attempt.
    it('applies and stores an event whose names and text hold lone surrogates, with U+FFFD in their place', async () => {
      const deps = {
        storage: suite.storage,
        eventsRetentionDays: 30,
        trayRetentionDays: RETENTION_DAYS,
        networkId: 'default',
      };
      const envelope = commentEvent({
        commentId: 'cm-half',
        postId: 'p-half',
        author: 'u-ben',
        postOwner: 'u-ana',
      });
      const broken = structuredClone(envelope);
      const users = (broken.data as { users?: { displayName?: string }[] }).users ?? [];
      for (const user of users) user.displayName = `${user.displayName ?? ''} \ud83d`;
      (broken.data as Record<string, unknown>)['note \udc00'] = 'half \ud83d';
      const { event: stored } = await applyJob(delivered(broken, START), deps);
      expect(stored).to.deep.include({ key: dedupeKeyOf(broken), status: 'applied' });
      const kept = await suite.storage.events.get(dedupeKeyOf(broken));
      expect((kept?.data as Record<string, unknown>)['note \uFFFD']).to.equal('half \uFFFD');
      const { records } = await suite.storage.records.pageAfter('u-ana', undefined, 10, START + 60_000);
      expect(records.map((record) => record.actors.map((actor) => actor.name.isWellFormed()))).to.deep.equal([
        [true],
      ]);
      expect(records[0]?.actors[0]?.name).to.include('\uFFFD');
    });
  });

  describe(`applyJob on ${engine}: U+0000 in the text the tray keeps`, () => {
    const suite = useTrayStorage(engine);

    it('applies a comment whose author and community names hold U+0000, with U+FFFD in its place', async () => {
      const deps = {
        storage: suite.storage,
        eventsRetentionDays: 30,
        trayRetentionDays: RETENTION_DAYS,
        networkId: 'default',
      };
      const envelope = structuredClone(
        commentEvent({ commentId: 'cm-nul', postId: 'p-nul', author: 'u-ben', postOwner: 'u-ana' }),
      );
      const users = (envelope.data as { users?: { displayName?: string }[] }).users ?? [];
      for (const user of users) user.displayName = `${user.displayName ?? ''}\u0000`;
      const community = (envelope.data as { community?: { displayName?: string } }).community;
      if (community) community.displayName = `Hiking\u0000Club`;
      const { event: stored } = await applyJob(delivered(envelope, START), deps);
      expect(stored).to.deep.include({ key: dedupeKeyOf(envelope), status: 'applied' });
      const { records } = await suite.storage.records.pageAfter('u-ana', undefined, 10, START + 60_000);
      expect(records).to.have.length(1);
      expect(records[0]?.actors[0]?.name).to.not.include('\u0000');
      expect(records[0]?.targetName).to.not.include('\u0000');
    });
  });

  describe(`applyJob on ${engine}: ids`, () => {
    const suite = useTrayStorage(engine);
    const deps = () => ({
      storage: suite.storage,
      eventsRetentionDays: 30,
      trayRetentionDays: RETENTION_DAYS,
      networkId: 'default',
      publishBans: async () => undefined,
    });

    // Over PostgreSQL's (and FerretDB's) largest index entry, such an id failed the store or the
    // tray's writes on every attempt and replay.
    it('stores a comment on a post whose id is 5,000 characters as invalid, and its job completes', async () => {
      const envelope = commentEvent({ postId: randomBytes(2_500).toString('hex'), commentId: 'cm-long' });
      const { event: stored } = await applyJob(delivered(envelope, START), deps());
      expect(stored).to.deep.include({ key: dedupeKeyOf(envelope), status: 'invalid' });
      expect(stored.error).to.match(/^data\.comment\.referenceId: expected an id of at most 128 characters/);
      expect(await suite.storage.events.get(dedupeKeyOf(envelope))).to.deep.include(stored);
      const { records } = await suite.storage.records.pageAfter('u-ana', undefined, 10, START + 60_000);
      expect(records).to.deep.equal([]);
    });

    // The longest ids an event may carry, made of the characters that take the most room: three
    // bytes of UTF-8 each (PostgreSQL's index entries count bytes), six in JSON (the MongoDB
    // adapter's keys are JSON), or escaped in JSON and in record keys. Every kind of event, with
    // every id that long, must still be stored and applied.
    const alphabets = {
      'three-byte characters': () => String.fromCharCode(0x4e00 + randomInt(20_000)),
      'control characters': () => String.fromCharCode(1 + randomInt(31)),
      'quotes, backslashes, underscores and percent signs': () => ['"', '\\', '_', '%'][randomInt(4)] ?? '_',
    };
    for (const [name, character] of Object.entries(alphabets)) {
      it(`applies every kind of event whose ids are all 128 ${name}`, async function () {
        this.timeout(60_000);
        const longest = (first: string) => {
          let text = first;
          while (text.length < 128) text += character();
          return text;
        };
        const [community, ana, ben, dee, eve, fay] = ['c', 'a', 'b', 'd', 'e', 'f'].map(longest) as [
          string,
          string,
          string,
          string,
          string,
          string,
        ];
        const [post, feedPost, comment, reply, reaction] = ['p', 'q', 'm', 'n', 'r'].map(longest) as [
          string,
          string,
          string,
          string,
          string,
        ];
        const onPost = { postId: post, postOwner: ana, communityId: community };
        const targets = { post, feedPost, comment, reply, community };
        const nameOf = (id: string) => Object.entries(targets).find(([, value]) => value === id)?.[0] ?? id;
        const held = async () => {
          const users = { ana, ben, dee, eve, fay };
          const byUser: Record<string, string[]> = {};
          for (const [name, user] of Object.entries(users)) {
            const { records } = await suite.storage.records.pageAfter(
              user,
              undefined,
              50,
              START + 60 * 60_000,
            );
            byUser[name] = records.map((record) => `${record.verb} ${nameOf(record.targetId)}`).sort();
          }
          return byUser;
        };
        const events: TestEnvelope[] = [
          membershipEvent('join', [ana, ben, dee, eve, fay], community, new Date(START).toISOString()),
          postEvent({
            postId: post,
            author: ana,
            communityId: community,
            mentions: [eve],
            createdAt: new Date(START + 60_000).toISOString(),
          }),
          postEvent({ postId: feedPost, author: ben, feed: 'user', feedOwner: ana, mentions: [eve] }),
          commentEvent({ ...onPost, commentId: comment, author: ben, mentions: [eve, dee] }),
          commentEvent({
            ...onPost,
            commentId: reply,
            author: fay,
            parent: { commentId: comment, userId: ben },
          }),
          reactionEvent({ ...onPost, reactionId: reaction, author: dee }),
          reactionEvent({
            ...onPost,
            reactionId: longest('s'),
            author: dee,
            comment: { commentId: comment, userId: ben },
          }),
          userUpdateEvent({ userId: ben, displayName: 'Ben' }),
          {
            event: 'user.didGlobalBan',
            data: { userIds: [dee], createdAt: new Date(START).toISOString(), users: [] },
          },
          membershipEvent('leave', [eve], community, new Date(START + 120_000).toISOString()),
          userDeleteEvent(fay),
          withIds(
            commentDeleteEvent({
              commentId: reply,
              author: fay,
              parent: { commentId: comment, userId: ben },
            }),
            onPost,
          ),
          withIds(reactionRemoveEvent({ reactionId: reaction }), { ...onPost, author: dee }),
          withIds(postDeleteEvent({ postId: post, author: ana }), onPost),
        ];
        for (const [index, envelope] of events.entries()) {
          const { event: stored } = await applyJob(delivered(envelope, START + (index + 3) * 60_000), deps());
          expect(stored.status, `${envelope.event}: ${stored.error ?? ''}`).to.equal('applied');
          // Once every action is in: each user's records, named by verb and target.
          if (envelope.event === 'user.didUpdate') {
            expect(await held()).to.deep.equal({
              ana: ['comment post', 'reaction post'],
              ben: ['mentreact comment', 'mentreply comment', 'post community'],
              dee: ['mention comment', 'post community'],
              eve: ['mention comment', 'mention feedPost', 'mention post', 'post community'],
              fay: ['post community'],
            });
          }
        }
        // The post deleted takes everything on it; the mention in the post on Ana's feed stays.
        expect(await held()).to.deep.equal({ ana: [], ben: [], dee: [], eve: ['mention feedPost'], fay: [] });
        expect((await suite.storage.events.list({ userId: ben }, 10)).items).to.have.length.above(0);
      });
    }
  });
}

/** A removal's payload on `onPost`'s post, community and authors instead of the builders' own. */
function withIds(
  envelope: TestEnvelope,
  onPost: { postId: string; postOwner: string; communityId: string; author?: string },
): TestEnvelope {
  const data = structuredClone(envelope.data) as Record<string, Record<string, unknown>>;
  data.post = {
    ...data.post,
    postId: onPost.postId,
    postedUserId: onPost.postOwner,
    targetId: onPost.communityId,
  };
  data.community = { communityId: onPost.communityId, displayName: 'Hiking Club' };
  if (data.comment) data.comment = { ...data.comment, referenceId: onPost.postId };
  if (data.reaction)
    data.reaction = {
      ...data.reaction,
      userId: onPost.author ?? data.reaction.userId,
      referenceId: onPost.postId,
    };
  return { event: envelope.event, data };
}
