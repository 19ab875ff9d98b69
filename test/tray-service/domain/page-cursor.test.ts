import { expect } from 'chai';
import { InvalidCursorError } from '../../../tray-service/domain/invalid-cursor-error.ts';
import {
  decodeCursor,
  decodeUserCursor,
  encodeCursor,
  encodeUserCursor,
} from '../../../tray-service/domain/page-cursor.ts';

describe('page cursors', () => {
  describe('of a time-ordered list', () => {
    it('give back the key they were made from', () => {
      const key = { at: new Date('2026-11-28T05:00:00.123Z'), id: 'evt_ä/1' };
      expect(decodeCursor(encodeCursor(key))).to.deep.equal(key);
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
      expect(() => decodeUserCursor(encodeCursor({ at: new Date(0), id: 'a' }))).to.throw(InvalidCursorError);
    });
  });
});
