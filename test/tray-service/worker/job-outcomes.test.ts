import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import {
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  minute,
  postEvent,
  reactionEvent,
} from './event-builder.ts';
import { readAll, useWorker } from './worker-harness.ts';

describe('tray worker: job outcomes', () => {
  const worker = useWorker();

  describe('the same job delivered twice (at-least-once)', () => {
    it('leaves exactly the same records and one stored event', async () => {
      await worker.deliver(membershipEvent('join', ['u-ben', 'u-cid'], 'c-same'), { receivedAt: minute(-5) });
      const events = [
        postEvent({ postId: 'p-i1', communityId: 'c-same', mentions: ['u-dee'] }),
        commentEvent({ postId: 'p-i1', commentId: 'cm-i1', communityId: 'c-same', mentions: ['u-eve'] }),
        commentEvent({
          postId: 'p-i1',
          commentId: 'cm-i2',
          author: 'u-dee',
          parent: { commentId: 'cm-i1', userId: 'u-cid' },
          communityId: 'c-same',
        }),
        reactionEvent({ postId: 'p-i1', reactionId: 'r-i1' }),
      ];
      for (const event of events) await worker.deliver(event, { receivedAt: minute(1) });
      const users = ['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve'];
      const snapshot = async () =>
        Promise.all(users.map((user) => readAll(worker.storage, user, Date.parse(minute(10)))));
      const before = await snapshot();
      for (const event of events) await worker.deliver(event, { receivedAt: minute(1) });
      expect(await snapshot()).to.deep.equal(before);
      const key = dedupeKeyOf(events[0]!);
      const stored = await worker.storage.events.list({}, 100);
      expect(stored.items.filter((event) => event.key === key)).to.have.length(1);
    });
  });

  // A redelivery after the event's job was removed (a completed job is kept a day at most) and its
  // dedupe mark expired is queued again under the same id, its attempts from 0: it was counted
  // (and announced, and an invalid one warned of) a second time.
  describe('the same event queued again after its job was removed', () => {
    it('counts it once', async () => {
      const envelope = {
        event: 'channel.didCreate',
        data: { userIds: ['u-ana'], channel: { channelId: `ch-${randomBytes(4).toString('hex')}` } },
      };
      const jobId = dedupeKeyOf(envelope);
      const counted = async () => {
        const text = await worker.registry.getSingleMetricAsString('tray_worker_events_total');
        return Number(/tray_worker_events_total\{status="stored"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
      };
      const before = await counted();
      const first = await worker.deliver(envelope, { jobId });
      await first.remove();
      const again = await worker.deliver(envelope, { jobId });
      expect(await again.getState()).to.equal('completed');
      expect((await counted()) - before).to.equal(1);
    });
  });

  describe('an unknown event name', () => {
    it('is stored with status `unknown`, counted, and the job completes', async () => {
      const envelope = { event: 'poll.didVote', data: { pollId: 'pl-1' } };
      const job = await worker.deliver(envelope);
      expect(await job.getState()).to.equal('completed');
      expect(await worker.event(dedupeKeyOf(envelope))).to.deep.include({
        event: 'poll.didVote',
        status: 'unknown',
        webhook: 'test-hook',
      });
      const metrics = await worker.registry.getSingleMetricAsString('tray_worker_events_total');
      expect(metrics).to.match(/tray_worker_events_total\{status="unknown"[^}]*\} 1/);
    });
  });

  describe('a known store-only event', () => {
    it('is stored with status `stored` and changes no record', async () => {
      const envelope = {
        event: 'channel.didCreate',
        data: { userIds: ['u-ana'], channel: { channelId: 'ch-1' } },
      };
      await worker.deliver(envelope);
      expect(await worker.event(dedupeKeyOf(envelope))).to.have.property('status', 'stored');
    });
  });

  describe('a known event with an invalid payload', () => {
    it('is stored with the validation error and completes without a retry', async () => {
      const envelope = commentEvent({ commentId: 'cm-bad' });
      delete (envelope.data.comment as Record<string, unknown>).userId;
      const job = await worker.deliver(envelope);
      expect(await job.getState()).to.equal('completed');
      expect(job.attemptsMade).to.equal(0);
      const stored = await worker.event(dedupeKeyOf(envelope));
      expect(stored).to.have.property('status', 'invalid');
      expect(stored?.error).to.match(/data\.comment\.userId/);
    });

    // More than an index entry may hold, such an id failed the job on every attempt and replay.
    it('is stored as invalid when it carries an id longer than 128 characters, and completes', async () => {
      const envelope = membershipEvent('join', ['u-ana', randomBytes(2_500).toString('hex')], 'c-long');
      // One attempt: it must complete at the first.
      const job = await worker.deliver(envelope, { jobOptions: { attempts: 1 } });
      expect(await job.getState()).to.equal('completed');
      expect(job.attemptsMade).to.equal(0);
      const stored = await worker.event(dedupeKeyOf(envelope));
      expect(stored).to.deep.include({ status: 'invalid', event: 'community.didJoin' });
      expect(stored?.error).to.equal('data.userIds.1: expected an id of at most 128 characters');
    });

    it('reports a reply without its parent comment as invalid', async () => {
      const envelope = commentEvent({ commentId: 'cm-bad2', parent: { commentId: 'cm-1', userId: 'u-cid' } });
      envelope.data.parentComment = null;
      await worker.deliver(envelope);
      expect(await worker.event(dedupeKeyOf(envelope))).to.deep.include({
        status: 'invalid',
        error: 'data.parentComment: required when comment.parentId is set',
      });
    });
  });

  // The contract says only "Timestamps are ISO 8601 strings": a sender's +hhmm, +hh or minutes-only
  // time is no reason to drop the comment.
  describe('an event timed in another ISO 8601 form', () => {
    it('is applied, its record dated at the instant the time names', async () => {
      const iso = new Date(Date.parse(minute(40))).toISOString();
      const forms = {
        extended: iso,
        basicOffset: iso.replace('.000Z', '+0000'),
        hourOffset: iso.replace('.000Z', '+00'),
        minutes: iso.replace(':00.000Z', 'Z'),
        micros: iso.replace('Z', '000Z'),
      };
      for (const [name, createdAt] of Object.entries(forms)) {
        const envelope = commentEvent({
          postId: `p-${name}`,
          postOwner: 'u-iso',
          commentId: `cm-${name}`,
          author: 'u-bob',
          createdAt,
        });
        await worker.deliver(envelope);
        const stored = await worker.event(dedupeKeyOf(envelope));
        expect([stored?.status, stored?.error], createdAt).to.deep.equal(['applied', undefined]);
      }
      const records = await worker.records('u-iso');
      expect(records.map((record) => [record.targetId, record.lastUpdate]).sort()).to.deep.equal(
        Object.keys(forms)
          .map((name) => [`p-${name}`, Date.parse(minute(40))])
          .sort(),
      );
    });
  });

  describe('a stored event', () => {
    it('keeps the envelope, webhook, receive time and an expiry of EVENTS_RETENTION_DAYS', async () => {
      const envelope = reactionEvent({ reactionId: 'r-s1' });
      await worker.deliver(envelope, { receivedAt: minute(2) });
      const stored = await worker.event(dedupeKeyOf(envelope));
      expect(stored).to.deep.include({ event: 'reaction.didAdd', data: envelope.data, status: 'applied' });
      expect(stored?.receivedAt.toISOString()).to.equal(minute(2));
      const expiresAt = Date.parse(minute(2)) + 30 * 24 * 3600 * 1000;
      await worker.storage.purgeExpired(new Date(expiresAt - 1));
      expect(await worker.event(dedupeKeyOf(envelope))).to.not.equal(null);
      await worker.storage.purgeExpired(new Date(expiresAt));
      expect(await worker.event(dedupeKeyOf(envelope))).to.equal(null);
    });
  });

  describe('metrics', () => {
    it('counts completed jobs and observes their duration', async () => {
      const jobs = await worker.registry.getSingleMetricAsString('tray_worker_jobs_total');
      expect(jobs).to.match(/tray_worker_jobs_total\{outcome="completed"[^}]*\} [1-9]/);
      const duration = await worker.registry.getSingleMetricAsString('tray_worker_job_duration_seconds');
      expect(duration).to.match(/tray_worker_job_duration_seconds_count\{[^}]*\} [1-9]/);
    });
  });
});
