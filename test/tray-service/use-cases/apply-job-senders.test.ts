import { expect } from 'chai';
import type { BanChange } from '../../../tray-service/domain/ban-change.ts';
import type { PlatformWebhooks } from '../../../tray-service/domain/platform-webhooks.ts';
import { applyJob, type ApplyJobDeps, type JobDelivery } from '../../../tray-service/use-cases/apply-job.ts';
import { deliveryOf } from '../../../tray-service/use-cases/replay-events.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { banEvent } from '../bans/ban-events.ts';
import { REQUIRED_ENGINES } from '../storage/conformance/conformance-adapters.ts';
import {
  BASE_TIME,
  commentDeleteEvent,
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  postDeleteEvent,
  postEvent,
  userDeleteEvent,
  type TestEnvelope,
} from '../worker/event-builder.ts';

const START = BASE_TIME;
const LATER = START + 3_600_000;

/** `envelope` as a receiver queues it from `webhook`, verified with `scheme` (absent: an older receiver). */
function from(
  webhook: string,
  scheme: 'platform' | 'standard-webhooks' | undefined,
  envelope: TestEnvelope,
  at: number,
): JobDelivery {
  return {
    dedupeKey: dedupeKeyOf(envelope),
    webhook,
    ...(scheme === undefined ? {} : { scheme }),
    receivedAt: new Date(at).toISOString(),
    event: envelope.event,
    data: envelope.data,
  };
}

// The tray applies the platform's events only (docs/receiver.md#what-a-standard-webhooks-sender-gets):
// another sender's event is stored for the events console and moderation, and changes nothing else,
// whatever its name says it is.
for (const engine of REQUIRED_ENGINES) {
  describe(`applyJob on ${engine}: events of a webhook that is not the platform's`, () => {
    const suite = useTrayStorage(engine);
    const published: BanChange[] = [];
    const deps = (platformWebhooks?: PlatformWebhooks, at = START): ApplyJobDeps => ({
      storage: suite.storage,
      eventsRetentionDays: 30,
      trayRetentionDays: 90,
      networkId: 'default',
      publishBans: async (changes) => void published.push(...changes),
      ...(platformWebhooks === undefined ? {} : { platformWebhooks }),
      now: () => at,
    });
    const regions: PlatformWebhooks = { names: new Set(['eu', 'us']) };
    const names = async (userId: string) =>
      (await suite.storage.records.pageAfter(userId, undefined, 10, LATER)).records.map((record) => [
        record.lastActionId,
        record.actors.map((actor) => actor.name),
      ]);
    const banned = async () => (await suite.storage.bans.all()).map((change) => change.userId).sort();

    it('a partner named nowhere in TRAY_PLATFORM_WEBHOOKS bans, writes, renames, removes and joins nothing', async () => {
      // The platform (eu): Cid comments on Ana's post; Fay joins the community.
      let at = START;
      const tick = () => (at += 60_000);
      const platform = async (envelope: TestEnvelope) => {
        const { event } = await applyJob(from('eu', 'platform', envelope, tick()), deps(regions, at));
        expect(event.status, envelope.event).to.equal('applied');
      };
      const partner = async (envelope: TestEnvelope) => {
        const { event } = await applyJob(from('partner', 'platform', envelope, tick()), deps(regions, at));
        expect(event).to.deep.include({ status: 'foreign', webhook: 'partner', event: envelope.event });
        expect(event).to.not.have.property('error');
        return event;
      };
      await platform(membershipEvent('join', ['u-fay'], 'c-hike', new Date(START).toISOString()));
      await platform(commentEvent({ commentId: 'cm-7', author: 'u-cid', postOwner: 'u-ana' }));
      expect(await names('u-ana')).to.deep.equal([['cm-7', ['Cid']]]);

      await partner(banEvent('ban', ['u-ana'], new Date(START).toISOString()));
      await partner(
        commentEvent({ commentId: 'cm-8', author: 'u-ben', postId: 'p-200', postOwner: 'u-dee' }),
      );
      await partner(userDeleteEvent('u-cid'));
      await partner(commentDeleteEvent({ commentId: 'cm-7', author: 'u-cid' }));
      await partner(postDeleteEvent({ postId: 'p-100', author: 'u-ana' }));
      await partner(membershipEvent('join', ['u-eve'], 'c-hike', new Date(START).toISOString()));

      expect(await banned()).to.deep.equal([]);
      expect(published).to.deep.equal([]);
      expect(await names('u-dee')).to.deep.equal([]);
      // Neither renamed "Deleted user" nor removed, and Cid's own tray not cleared by a clear mark.
      expect(await names('u-ana')).to.deep.equal([['cm-7', ['Cid']]]);
      expect(await suite.storage.clears.latest('u-cid')).to.equal(0);

      // The platform's post reaches Fay, a member, and not Eve, whom only the partner joined.
      await platform(postEvent({ postId: 'p-300', author: 'u-ana', createdAt: new Date(at).toISOString() }));
      expect(await names('u-fay')).to.deep.equal([['p-300', ['Ana']]]);
      expect(await names('u-eve')).to.deep.equal([]);

      // Another region is the platform too: its ban is applied and published.
      await applyJob(
        from('us', 'platform', banEvent('ban', ['u-gus'], new Date(at).toISOString()), tick()),
        deps(regions, at),
      );
      expect(await banned()).to.deep.equal(['u-gus']);
      expect(published.map((change) => change.userId)).to.deep.equal(['u-gus']);
    });

    it('with TRAY_PLATFORM_WEBHOOKS unset, a Standard Webhooks delivery is never applied; one of the platform scheme, or from an older receiver, is', async () => {
      const ban = banEvent('ban', ['u-hal'], new Date(START).toISOString());
      const { event } = await applyJob(from('billing', 'standard-webhooks', ban, START), deps());
      expect(event).to.deep.include({ status: 'foreign', webhook: 'billing' });
      expect(await banned()).to.not.include('u-hal');

      const comment = commentEvent({
        commentId: 'cm-9',
        author: 'u-ian',
        postId: 'p-400',
        postOwner: 'u-jo',
      });
      expect((await applyJob(from('default', 'platform', comment, START), deps())).event.status).to.equal(
        'applied',
      );
      expect(await names('u-jo')).to.deep.equal([['cm-9', ['Ian']]]);

      // A job queued before the receiver said its scheme: applied, as it was then.
      const older = commentEvent({
        commentId: 'cm-10',
        author: 'u-ian',
        postId: 'p-401',
        postOwner: 'u-kim',
      });
      expect((await applyJob(from('eu', undefined, older, START), deps())).event.status).to.equal('applied');
      expect(await names('u-kim')).to.deep.equal([['cm-10', ['Ian']]]);
    });

    it('a Standard Webhooks delivery is not applied even from a webhook TRAY_PLATFORM_WEBHOOKS names', async () => {
      const ban = banEvent('ban', ['u-lea'], new Date(START).toISOString());
      const { event } = await applyJob(from('eu', 'standard-webhooks', ban, START), deps(regions));
      expect(event.status).to.equal('foreign');
      expect(await banned()).to.not.include('u-lea');
    });

    /** A comment for `postOwner` from a Standard Webhooks sender, as stored (`foreign`). */
    async function storedForeign(commentId: string, postId: string, postOwner: string) {
      const comment = commentEvent({ commentId, author: 'u-max', postId, postOwner });
      await applyJob(from('billing', 'standard-webhooks', comment, START), deps());
      const stored = await suite.storage.events.get(dedupeKeyOf(comment));
      if (!stored) throw new Error('not stored');
      return stored;
    }

    it("a replay of an event stored as another sender's applies nothing, whatever the setting now says", async () => {
      const stored = await storedForeign('cm-11', 'p-500', 'u-ned');
      // A stored event has no scheme: the replay goes by the verdict stored with it.
      for (const platformWebhooks of [undefined, { names: new Set(['billing']) }]) {
        const { event } = await applyJob(deliveryOf(stored), deps(platformWebhooks));
        expect(event.status).to.equal('foreign');
      }
      expect(await names('u-ned')).to.deep.equal([]);
    });

    // A replay reads events, then applies each: one stored as another sender's may expire (and
    // be purged) in between, and its row is then stored anew from the replay's delivery.
    it("a replay of an event stored as another sender's applies nothing also once its row is gone", async () => {
      const stored = await storedForeign('cm-12', 'p-501', 'u-oli');
      const replayed = deliveryOf(stored);
      await suite.storage.purgeExpired(new Date(stored.expiresAt.getTime() + 86_400_000));
      expect(await suite.storage.events.get(stored.key)).to.equal(undefined);
      const { event } = await applyJob(replayed, deps());
      expect(event.status).to.equal('foreign');
      expect(await names('u-oli')).to.deep.equal([]);
    });
  });
}
