import { expect } from 'chai';
import { toNotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { aReaderRecord } from '../../support/tray-record-builder.ts';

describe('toNotificationRecord (docs/contract.md#tray-records)', () => {
  it('takes imageUrl and avatarCustomUrl from the latest actor and lists at most 3 names', () => {
    const record = aReaderRecord({
      userId: 'u',
      actors: [
        { userId: 'a', name: 'Ana', imageUrl: 'https://i/a', avatarCustomUrl: 'https://i/a2', at: 4 },
        { userId: 'b', name: 'Ben', imageUrl: 'https://i/b', at: 3 },
        { userId: 'c', name: 'Cid', at: 2 },
        { userId: 'd', name: 'Dee', at: 1 },
      ],
      actorsCount: 7,
    });
    const result = toNotificationRecord(record, 'text');
    expect(result).to.include({
      imageUrl: 'https://i/a',
      avatarCustomUrl: 'https://i/a2',
      actorsCount: 7,
      description: 'text',
    });
    expect(result.actors).to.deep.equal([{ name: 'Ana' }, { name: 'Ben' }, { name: 'Cid' }]);
  });

  it('leaves avatarCustomUrl, parentTargetId and lastActionSegmentNo out when the record has none', () => {
    const result = toNotificationRecord(
      aReaderRecord({ userId: 'u', actors: [{ userId: 'b', name: 'Ben', at: 1 }] }),
      't',
    );
    expect(result).not.to.have.any.keys(
      'avatarCustomUrl',
      'parentTargetId',
      'lastActionSegmentNo',
      'userId',
      'expiresAt',
    );
    expect(result.imageUrl).to.equal('');
  });
});
