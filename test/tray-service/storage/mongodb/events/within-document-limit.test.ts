import { expect } from 'chai';
import { BSON } from 'mongodb';
import type { EventDoc } from '../../../../../tray-service/storage/mongodb/collections/events-collection.ts';
import {
  MAX_DOCUMENT_BYTES,
  PAYLOAD_NOT_KEPT,
  withinDocumentLimit,
} from '../../../../../tray-service/storage/mongodb/events/within-document-limit.ts';
import { aPost } from '../../../../support/activity-builder.ts';

const at = new Date('2026-11-20T10:00:00.000Z');

function eventDoc(overrides: Partial<EventDoc>): EventDoc {
  return {
    _id: 'k',
    event: 'post.didCreate',
    data: {},
    webhook: 'wh',
    receivedAt: at,
    storedAt: at,
    expiresAt: at,
    status: 'applied',
    moderation: 'none',
    ...overrides,
  };
}

describe('storage/mongodb withinDocumentLimit', () => {
  it('leaves a document that fits as it is', () => {
    const doc = eventDoc({ data: { text: 'x'.repeat(1_000_000) } });
    expect(withinDocumentLimit(doc)).to.equal(doc);
  });

  // MongoDB refuses an update whose result passes the limit (FerretDB 1.24 checks only inserts, so
  // this is asserted here, on sizes): a document kept whole must still take what its job writes
  // later, or the job would fail on every attempt.
  it('keeps whole only a document that still fits with the fields its job adds later', () => {
    const later = { appliedAt: at, lagPending: true, moderation: 'ban-request' } as const;
    const probe = eventDoc({ data: { text: '' }, status: 'stored', countPending: true });
    const room = MAX_DOCUMENT_BYTES - BSON.calculateObjectSize(probe);
    const padded = (pad: number) =>
      eventDoc({ data: { text: 'x'.repeat(pad) }, status: 'stored', countPending: true });
    const keptWhole = (pad: number) => {
      const doc = padded(pad);
      return withinDocumentLimit(doc) === doc;
    };
    // Kept whole up to some padding and no further: the largest such document is the one to check
    // (found by halving, each try a 16 MiB string).
    let [whole, cut] = [0, room];
    expect(keptWhole(whole)).to.equal(true);
    expect(keptWhole(cut)).to.equal(false);
    while (cut - whole > 1) {
      const middle = Math.floor((whole + cut) / 2);
      if (keptWhole(middle)) whole = middle;
      else cut = middle;
    }
    expect(BSON.calculateObjectSize({ ...padded(whole), ...later }), `padding ${whole}`).to.be.below(
      MAX_DOCUMENT_BYTES,
    );
  });

  it('replaces a payload too large by a marker, keeping the post’s activity for a late join', () => {
    const activity = aPost('u-ana', { id: 'p-1', at: at.getTime() });
    const doc = eventDoc({
      data: { text: 'x'.repeat(MAX_DOCUMENT_BYTES) },
      userId: 'u-ana',
      communityDay: '["c-hike","2026-11-20"]',
      activityAt: at.getTime(),
      postActivity: activity,
    });
    const kept = withinDocumentLimit(doc);
    expect(kept.data).to.deep.equal({
      payloadNotKept: { reason: PAYLOAD_NOT_KEPT, bsonBytes: MAX_DOCUMENT_BYTES + 16 },
    });
    expect(kept).to.deep.include({ userId: 'u-ana', postActivity: activity, status: 'applied' });
    expect(kept.error).to.match(/^payload not kept: 16777232 bytes of BSON/);
  });

  // A display name of many megabytes makes the post's activity too large as well: the event is
  // still stored; only a member joining late misses that post.
  it('leaves out the post’s activity too when even the marked document would not fit', () => {
    const activity = aPost('u-ana', { id: 'p-1', at: at.getTime(), name: 'n'.repeat(MAX_DOCUMENT_BYTES) });
    const doc = eventDoc({
      data: { users: [{ userId: 'u-ana', displayName: activity.actor.name }] },
      communityDay: '["c-hike","2026-11-20"]',
      activityAt: at.getTime(),
      postActivity: activity,
    });
    const kept = withinDocumentLimit(doc);
    expect(kept.data).to.have.property('payloadNotKept');
    expect(kept).to.not.have.any.keys('postActivity', 'communityDay', 'activityAt');
    expect(kept.error).to.match(/; nor its post's activity, for a late join$/);
  });

  // The marker is no escaped payload: read as it is (escaped-keys.ts).
  it('keeps no escape flag beside the marker of a payload too large', () => {
    const kept = withinDocumentLimit(
      eventDoc({ data: { '%24type': 'x'.repeat(MAX_DOCUMENT_BYTES) }, keysEscaped: true }),
    );
    expect(kept.data).to.have.property('payloadNotKept');
    expect(kept).to.not.have.property('keysEscaped');
  });
});
