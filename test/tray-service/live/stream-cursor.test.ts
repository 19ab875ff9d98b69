import { expect } from 'chai';
import fc from 'fast-check';
import {
  advanceQuiet,
  CLEARED_ID,
  copyCursor,
  decodeStreamCursor,
  encodeStreamCursor,
  freshCursor,
  hasDelivered,
  hasSeen,
  inWindow,
  isAheadOf,
  MAX_CLOCK_AHEAD_MS,
  markSeen,
  MAX_EVENT_ID_LENGTH,
  passed,
  passThrough,
  mayOwe,
  MAX_SEEN,
  QUIET_MS,
} from '../../../tray-service/live/stream-cursor.ts';
import { SETTLE_MS } from '../../../tray-service/domain/settle-window.ts';
import { streamHeaders, streamQuery } from '../../../tray-service/http/api-schema/stream-schemas.ts';

const T = 1_790_000_000_000;

describe('stream cursor (live stream event ids)', () => {
  describe('a new stream', () => {
    // Its client read its history, but a state is stamped before its write lands: one stamped
    // within the window before the opening may have landed after that read.
    it('owes nothing changed more than the window before it opened, and everything later', () => {
      const cursor = freshCursor(T);
      expect(inWindow(cursor, T - SETTLE_MS)).to.equal(false);
      expect(inWindow(cursor, T - SETTLE_MS + 1)).to.equal(true);
      expect(inWindow(cursor, T)).to.equal(true);
      expect(inWindow(cursor, T + 1)).to.equal(true);
    });

    it('keeps its floor through an id while the floor is inside the window, then drops it', () => {
      const cursor = freshCursor(T);
      markSeen(cursor, 'comment_p1_u', 7, T + 100);
      const again = decodeStreamCursor(encodeStreamCursor(cursor));
      expect(again?.floor).to.equal(T);
      expect(again && inWindow(again, T - SETTLE_MS)).to.equal(false);
      markSeen(cursor, 'comment_p2_u', 1, T + SETTLE_MS + 10);
      expect(encodeStreamCursor(cursor)).to.not.include('~');
    });
  });

  describe('within the settle window', () => {
    it('tells a delivered state from a newer one of the same record', () => {
      const cursor = freshCursor(T);
      markSeen(cursor, 'comment_p1_u', 7, T + 100);
      const again = decodeStreamCursor(encodeStreamCursor(cursor));
      if (!again) throw new Error('no cursor');
      expect(hasSeen(again, 'comment_p1_u', 7)).to.equal(true);
      expect(hasSeen(again, 'comment_p1_u', 6)).to.equal(true);
      expect(hasSeen(again, 'comment_p1_u', 8)).to.equal(false);
      expect(hasSeen(again, 'comment_p2_u', 1)).to.equal(false);
    });

    it("counts a record's state as delivered once sent, or once before the window (which reaches back before the floor)", () => {
      const cursor = freshCursor(T);
      markSeen(cursor, 'comment_p1_u', T + 100, T + 100);
      expect(hasDelivered(cursor, 'comment_p1_u', T + 100), 'sent').to.equal(true);
      expect(hasDelivered(cursor, 'comment_p1_u', T + 200), 'a later state').to.equal(false);
      expect(hasDelivered(cursor, 'comment_p2_u', T + 50), 'another record, not sent').to.equal(false);
      // Stamped before its write landed: it may have landed after the client read its history.
      expect(hasDelivered(cursor, 'comment_p2_u', T - 1), 'stamped just before the opening').to.equal(false);
      expect(hasDelivered(cursor, 'comment_p2_u', T), 'stamped at the opening').to.equal(false);
      // Its client read it from history.
      expect(hasDelivered(cursor, 'comment_p2_u', T - SETTLE_MS), 'settled before the opening').to.equal(
        true,
      );
      markSeen(cursor, 'comment_p3_u', T + 20_000, T + 20_000);
      expect(hasDelivered(cursor, 'comment_p2_u', T + 20_000 - SETTLE_MS), 'before the window').to.equal(
        true,
      );
    });

    it('may owe what changed from a lost change on, after its floor less the window, besides its window', () => {
      const cursor = freshCursor(T);
      markSeen(cursor, 'a', T + 20_000, T + 20_000);
      expect(mayOwe(cursor, T + 1_000), 'before the window').to.equal(false);
      expect(mayOwe(cursor, T + 1_000, T + 1_000), 'from the lost change on').to.equal(true);
      expect(mayOwe(cursor, T + 999, T + 1_000), 'before the lost change').to.equal(false);
      expect(mayOwe(cursor, T - SETTLE_MS, T - 10_000), 'before the floor: read from history').to.equal(
        false,
      );
      // Stamped before its write landed, it may have landed after the client read its history.
      expect(mayOwe(cursor, T - 1_000, T - 10_000), 'stamped within the window before the floor').to.equal(
        true,
      );
      expect(mayOwe(cursor, T + 20_000 - SETTLE_MS + 1), 'inside the window').to.equal(true);
    });

    it('looks back SETTLE_MS before the newest delivered change, so a write that landed late is resent', () => {
      const cursor = freshCursor(T);
      markSeen(cursor, 'a', 1, T + 10_000);
      expect(inWindow(cursor, T + 10_000 - SETTLE_MS + 1)).to.equal(true);
      expect(inWindow(cursor, T + 10_000 - SETTLE_MS)).to.equal(false);
    });

    it('treats a delete-all like a record whose version is its time', () => {
      const cursor = freshCursor(T);
      markSeen(cursor, CLEARED_ID, T + 50, T + 50);
      const again = decodeStreamCursor(encodeStreamCursor(cursor));
      expect(again && hasSeen(again, CLEARED_ID, T + 50)).to.equal(true);
      expect(again && hasSeen(again, CLEARED_ID, T + 60)).to.equal(false);
    });

    it(`keeps at most ${MAX_SEEN} states, so an id stays short`, () => {
      const cursor = freshCursor(T);
      for (let i = 0; i < 200; i += 1) markSeen(cursor, `r${i}`, 1, T + 1 + i);
      expect(cursor.seen.size).to.equal(MAX_SEEN);
      expect(encodeStreamCursor(cursor).length).to.be.at.most(MAX_EVENT_ID_LENGTH);
      expect(decodeStreamCursor(encodeStreamCursor(cursor))?.seen.size).to.equal(MAX_SEEN);
    });
  });

  describe("a catch-up's place", () => {
    it("counts every state up to it in the pages' order as delivered: by time, then key in code point order", () => {
      const cursor = freshCursor(0);
      markSeen(cursor, 'r-0', T, T);
      passThrough(cursor, { changedAt: T - 10, key: 'b\u{1F600}' }, T);
      expect(passed(cursor, 'zzz', T - 11)).to.equal(true);
      expect(passed(cursor, 'a', T - 10)).to.equal(true);
      expect(passed(cursor, 'b\u{1F600}', T - 10)).to.equal(true);
      // U+FFFD is before U+1F600 in code points, after it in UTF-16 units.
      expect(passed(cursor, 'b\uFFFD', T - 10)).to.equal(true);
      expect(passed(cursor, 'c', T - 10)).to.equal(false);
      expect(passed(cursor, 'a', T - 9)).to.equal(false);
      expect(hasDelivered(cursor, 'a', T - 10)).to.equal(true);
      expect(hasDelivered(cursor, 'c', T - 10)).to.equal(false);
    });

    it('moves only forward, and only to a state settled when its page was read', () => {
      const cursor = freshCursor(0);
      passThrough(cursor, { changedAt: T, key: 'b' }, T - 1);
      expect(cursor.through).to.equal(undefined);
      passThrough(cursor, { changedAt: T, key: 'b' }, T);
      passThrough(cursor, { changedAt: T, key: 'a' }, T);
      expect(cursor.through).to.deep.equal({ changedAt: T, key: 'b' });
      passThrough(cursor, { changedAt: T, key: 'c' }, T);
      expect(cursor.through).to.deep.equal({ changedAt: T, key: 'c' });
      expect(copyCursor(cursor).through).to.deep.equal({ changedAt: T, key: 'c' });
    });
  });

  describe('a quiet stream', () => {
    it(`moves up to ${QUIET_MS} ms before the clock, never back, and keeps what it owes after that`, () => {
      const cursor = freshCursor(T);
      expect(advanceQuiet(cursor, T + QUIET_MS, QUIET_MS)).to.equal(false);
      expect(advanceQuiet(cursor, T + QUIET_MS + 60_000, QUIET_MS)).to.equal(true);
      expect(cursor.at).to.equal(T + 60_000);
      expect(advanceQuiet(cursor, T + QUIET_MS + 30_000, QUIET_MS)).to.equal(false);
      expect(cursor.at).to.equal(T + 60_000);
      // The window still looks SETTLE_MS back from the moved time, and the id carries it.
      expect(inWindow(cursor, T + 60_000 - SETTLE_MS + 1)).to.equal(true);
      expect(inWindow(cursor, T + 60_000 - SETTLE_MS)).to.equal(false);
      expect(decodeStreamCursor(encodeStreamCursor(cursor))?.at).to.equal(T + 60_000);
    });

    it('drops from its id the states the moved window has left behind, and keeps the newer', () => {
      const cursor = freshCursor(T);
      markSeen(cursor, 'old', 1, T + 1);
      markSeen(cursor, 'new', 2, T + 70_000);
      advanceQuiet(cursor, T + 70_000 + QUIET_MS - 1_000, QUIET_MS);
      const again = decodeStreamCursor(encodeStreamCursor(cursor));
      expect(again && hasSeen(again, 'new', 2)).to.equal(true);
      expect(again?.seen.size).to.equal(1);
    });
  });

  describe('ids', () => {
    it('round-trip whatever was delivered', () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              id: fc.string({ minLength: 1, maxLength: 40, size: 'max' }),
              version: fc.integer({ min: 0, max: 2 ** 50 }),
              offset: fc.integer({ min: 0, max: 20_000 }),
            }),
            { maxLength: 80, size: 'max' },
          ),
          (states) => {
            const cursor = freshCursor(T);
            for (const state of states) markSeen(cursor, state.id, state.version, T + state.offset);
            const again = decodeStreamCursor(encodeStreamCursor(cursor));
            if (!again) return false;
            expect(again.at).to.equal(cursor.at);
            for (const [hash, entry] of cursor.seen) {
              if (inWindow(cursor, entry.changedAt))
                expect(again.seen.get(hash)?.version).to.equal(entry.version);
            }
            return true;
          },
        ),
      );
    });

    it("always pass the stream's own schema, so a client can send any of them back", () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              record: fc.nat({ max: 3 * MAX_SEEN }),
              // Versions are change times: eight base-36 digits today, up to eleven in the id's range.
              version: fc.oneof(
                fc.integer({ min: T, max: T + 20_000 }),
                fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
              ),
              offset: fc.nat(),
            }),
            { maxLength: 3 * MAX_SEEN, size: 'max' },
          ),
          // How far apart the changes are: a burst (mark-all-as-read) puts them all in one window.
          fc.integer({ min: 0, max: 20_000 }),
          fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER - 20_000 }),
          (states, spread, start) => {
            const cursor = freshCursor(start);
            for (const state of states) {
              markSeen(cursor, `r${state.record}`, state.version, start + (state.offset % (spread + 1)));
              const id = encodeStreamCursor(cursor);
              expect(streamQuery.safeParse({ lastEventId: id }).success, id).to.equal(true);
              expect(streamHeaders.safeParse({ 'Last-Event-ID': id }).success, id).to.equal(true);
              expect(decodeStreamCursor(id), id).to.not.equal(undefined);
            }
          },
        ),
      );
    });

    it("carry a catch-up's place while it is inside the window, for a key of up to 280 bytes", () => {
      fc.assert(
        fc.property(
          // Any code points, four bytes at most each.
          fc.string({ minLength: 1, maxLength: 70, unit: 'binary', size: 'max' }),
          fc.integer({ min: 0, max: SETTLE_MS - 1 }),
          (key, before) => {
            const cursor = freshCursor(0);
            markSeen(cursor, 'r-1', T, T);
            passThrough(cursor, { changedAt: T - before, key }, T);
            const again = decodeStreamCursor(encodeStreamCursor(cursor));
            expect(again?.through).to.deep.equal({ changedAt: T - before, key });
          },
        ),
      );
      // A longer key is left out: a reconnect may repeat what the catch-up sent, never lose it.
      const long = freshCursor(0);
      markSeen(long, 'r-1', T, T);
      passThrough(long, { changedAt: T, key: 'k'.repeat(288) }, T);
      expect(decodeStreamCursor(encodeStreamCursor(long))?.through?.key).to.have.length(288);
      passThrough(long, { changedAt: T, key: 'k'.repeat(289) }, T);
      expect(decodeStreamCursor(encodeStreamCursor(long))?.through).to.equal(undefined);
      // Behind the window it says nothing the time does not.
      const cursor = freshCursor(0);
      passThrough(cursor, { changedAt: T - SETTLE_MS, key: 'k' }, T);
      markSeen(cursor, 'r-1', T, T);
      expect(decodeStreamCursor(encodeStreamCursor(cursor))?.through).to.equal(undefined);
    });

    it('refuses strings it never sent', () => {
      for (const id of [
        '',
        'not an id',
        'ABC',
        'mws53qg8.short1',
        `mws53qg8${'.abcdefgh1'.repeat(MAX_SEEN + 1)}`,
        // Past Number.MAX_SAFE_INTEGER: read back rounded, it would not be the id that was sent.
        'zzzzzzzzzzz',
        'mws53qg8~zzzzzzzzzzz',
        'mws53qg8.abcdefghzzzzzzzzzzz',
        // A catch-up's place after the id's time, or a key not as this service encodes it.
        'mws53qg8!mws53qg9:YQ',
        'mws53qg8!mws53qg7:YR',
        'mws53qg8!mws53qg7:',
      ]) {
        expect(decodeStreamCursor(id), id).to.equal(undefined);
      }
    });

    it(`are ahead of the clock when their time or floor is more than ${MAX_CLOCK_AHEAD_MS} ms past now`, () => {
      const limit = T + MAX_CLOCK_AHEAD_MS;
      expect(isAheadOf({ at: limit, floor: limit }, T)).to.equal(false);
      expect(isAheadOf({ at: limit + 1, floor: 0 }, T)).to.equal(true);
      expect(isAheadOf({ at: T, floor: limit + 1 }, T)).to.equal(true);
    });
  });
});
