import { expect } from 'chai';
import { InvalidCursorError } from '../../../tray-service/domain/invalid-cursor-error.ts';
import {
  decodeCursor,
  decodeListCursor,
  decodeRecordCursor,
  decodeUserCursor,
  encodeListCursor,
  encodeUserCursor,
  type CursorScope,
} from '../../../tray-service/domain/page-cursor.ts';

const crafted = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const events: CursorScope = { list: 'events', filter: { event: 'post.didCreate' } };

describe('page cursors', () => {
  describe('of a time-ordered list', () => {
    it('give back the key they were made from', () => {
      const key = { at: new Date('2026-11-28T05:00:00.123Z'), id: 'evt_ä/1' };
      expect(decodeListCursor(encodeListCursor(key, events), events)).to.deep.equal(key);
      expect(decodeCursor(encodeListCursor(key, events))).to.deep.equal(key);
    });

    it('are opaque base64url', () => {
      const cursor = encodeListCursor({ at: new Date(0), id: 'k' }, events);
      expect(cursor).to.match(/^[A-Za-z0-9_-]+$/);
      expect(cursor).to.not.include('post.didCreate');
    });

    it('go back to the same filter however its members come, and its times as instants', () => {
      const key = { at: new Date(0), id: 'k' };
      const since = {
        list: 'events',
        filter: { since: new Date('2026-11-20'), event: 'a', until: undefined },
      } as const;
      const cursor = encodeListCursor(key, since);
      const same: CursorScope = {
        list: 'events',
        filter: { event: 'a', since: new Date('2026-11-20T00:00:00Z') },
      };
      expect(decodeListCursor(cursor, same)).to.deep.equal(key);
    });

    it('are refused on another list or with another filter, saying which', () => {
      const cursor = encodeListCursor({ at: new Date(0), id: 'k' }, events);
      expect(() => decodeListCursor(cursor, { list: 'decisions', filter: events.filter }))
        .to.throw(InvalidCursorError, 'cursor: made for another list (events), not for decisions')
        .with.property('code', 'INVALID_CURSOR');
      for (const filter of [
        {},
        { event: 'comment.didCreate' },
        { event: 'post.didCreate', webhook: 'main' },
      ]) {
        expect(() => decodeListCursor(cursor, { list: 'events', filter }), JSON.stringify(filter)).to.throw(
          InvalidCursorError,
          'cursor: made for another filter;',
        );
      }
      // Made by hand, with no list or filter: what a cursor handed out before they were held.
      expect(() => decodeListCursor(crafted({ t: 0, k: 'k' }), events)).to.throw(
        InvalidCursorError,
        'cursor: not a cursor this API returned',
      );
    });

    it('hold every time both a Date and PostgreSQL can: 4713 BC to the end of Date', () => {
      for (const ms of [-210_866_803_200_000, 8_640_000_000_000_000]) {
        expect(decodeCursor(crafted({ t: ms, k: 'a' })).at.getTime()).to.equal(ms);
      }
    });
  });

  describe('of a list of user ids', () => {
    it('give back the id they were made from', () => {
      expect(decodeUserCursor(encodeUserCursor('u-ana'))).to.equal('u-ana');
    });
  });

  describe('that no page handed out', () => {
    const garbage = [
      'x',
      '',
      encodeUserCursor('u-ana'),
      Buffer.from('{"t":1.5,"k":"a"}').toString('base64url'),
    ];

    it('are refused with a typed domain error naming the parameter, not an HTTP one', () => {
      for (const cursor of garbage) {
        expect(() => decodeCursor(cursor), cursor)
          .to.throw(InvalidCursorError, 'cursor: not a cursor this API returned')
          .with.property('code', 'INVALID_CURSOR');
      }
      expect(() => decodeUserCursor(encodeListCursor({ at: new Date(0), id: 'a' }, events))).to.throw(
        InvalidCursorError,
      );
    });

    it('are refused when their time is one no Date holds or PostgreSQL cannot compare with', () => {
      for (const t of [9e15, 8_640_000_000_000_001, -9e14, -210_866_803_200_001]) {
        expect(() => decodeCursor(crafted({ t, k: 'x' })), String(t)).to.throw(InvalidCursorError);
      }
    });

    it('are refused when a key or id holds U+0000 (none stored can; PostgreSQL text cannot)', () => {
      expect(() => decodeCursor(crafted({ t: 0, k: 'a\u0000' }))).to.throw(InvalidCursorError);
      expect(() => decodeUserCursor(crafted({ u: 'a\u0000' }))).to.throw(InvalidCursorError);
      expect(() => decodeRecordCursor(crafted({ u: 'x', r: 'a\u0000' }))).to.throw(InvalidCursorError);
      expect(() => decodeRecordCursor(crafted({ u: 'x\u0000', r: 'a' }))).to.throw(InvalidCursorError);
    });
  });
});
