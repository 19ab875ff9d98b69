import { expect } from 'chai';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import { encodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import { applyJob, type JobDelivery } from '../../../tray-service/use-cases/apply-job.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { REQUIRED_ENGINES } from '../storage/conformance/conformance-adapters.ts';
import {
  BASE_TIME,
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  postEvent,
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

  describe(`applyJob on ${engine}: an event larger than a document may be`, () => {
    const suite = useTrayStorage(engine);

    // WEBHOOK_MAX_BODY_BYTES may allow 64 MB, and a JSON array of numbers grows about sixfold in
    // BSON: such an event must still be applied and stored, never fail its job on every attempt.
    it('is applied to the tray and stored, and its job completes', async function () {
      this.timeout(120_000);
      const deps = { storage: suite.storage, eventsRetentionDays: 30, trayRetentionDays: RETENTION_DAYS };
      await applyJob(delivered(membershipEvent('join', ['u-ben'], 'c-big'), START), deps);
      const post = postEvent({
        postId: 'p-big',
        communityId: 'c-big',
        createdAt: new Date(START + 60_000).toISOString(),
      });
      // 3 MB of JSON, about 18 MB of BSON: over MongoDB's 16 MiB document limit.
      post.data.attachments = new Array<number>(1_500_000).fill(0);
      const stored = await applyJob(delivered(post, START + 120_000), deps);
      expect(stored).to.deep.include({ key: dedupeKeyOf(post), event: 'post.didCreate', status: 'applied' });
      expect((await suite.storage.events.get(dedupeKeyOf(post)))?.status).to.equal('applied');
      const { records } = await suite.storage.records.pageAfter('u-ben', undefined, 10, START + 180_000);
      expect(records.map((record) => [record.verb, record.lastActionId])).to.deep.equal([['post', 'p-big']]);
    });
  });
}
