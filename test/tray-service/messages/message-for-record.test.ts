import { expect } from 'chai';
import { messageForRecord } from '../../../tray-service/messages/message-for-record.ts';
import { buildTrayRecord } from '../../support/tray-record-builder.ts';

describe('messageForRecord', () => {
  describe('a mention on a user feed', () => {
    it("names the mentioning user's feed, as the platform words it, also on someone else's feed", () => {
      const record = buildTrayRecord({
        verb: 'mention',
        feed: 'user',
        actors: 1,
        mentionIn: 'comment',
        feedName: 'Ana',
        names: ['Cid'],
      });
      expect(messageForRecord(record)).to.deep.include({ key: 'mention.comment.user' });
      expect(messageForRecord(record).values).to.include({ actor1: 'Cid', feedOwner: 'Cid' });
    });
  });

  describe('a mention in a community', () => {
    it('names the community and no feed owner', () => {
      const record = buildTrayRecord({ verb: 'mention', feed: 'community', actors: 1, mentionIn: 'post' });
      expect(messageForRecord(record)).to.deep.include({ key: 'mention.post.community' });
      expect(messageForRecord(record).values).to.include({ community: 'Hiking Club', feedOwner: '' });
    });
  });

  describe('a post on a user feed', () => {
    it('still names the feed owner (only mentions follow the mentioning user)', () => {
      const record = buildTrayRecord({
        verb: 'post',
        feed: 'user',
        actors: 1,
        feedName: 'Ana',
        names: ['Cid'],
      });
      expect(messageForRecord(record).values).to.include({ actor1: 'Cid', feedOwner: 'Ana' });
    });
  });

  describe('values for the placeholders', () => {
    it('leaves the second name empty with one actor, and the feed owner empty in a community', () => {
      const { values } = messageForRecord(buildTrayRecord({ verb: 'comment', feed: 'community', actors: 1 }));
      expect(values).to.deep.equal({
        actor1: 'Ana',
        actor2: '',
        others: 0,
        community: 'Hiking Club',
        feedOwner: '',
      });
    });

    it('leaves the community empty on a user feed', () => {
      const { values } = messageForRecord(
        buildTrayRecord({ verb: 'comment', feed: 'user', actors: 2, feedName: 'Ana' }),
      );
      expect(values).to.deep.equal({
        actor1: 'Ana',
        actor2: 'Ben',
        others: 0,
        community: '',
        feedOwner: 'Ana',
      });
    });

    it('renders a record without actors with empty names instead of failing', () => {
      const record = {
        ...buildTrayRecord({ verb: 'post', feed: 'community', actors: 1 }),
        actors: [],
        actorsCount: 0,
      };
      expect(messageForRecord(record)).to.deep.include({ key: 'post.community.1' });
      expect(messageForRecord(record).values).to.include({ actor1: '', actor2: '' });
    });

    it('reads a mention stored without mentionIn as a mention in a post', () => {
      const { mentionIn: _dropped, ...record } = buildTrayRecord({
        verb: 'mention',
        feed: 'community',
        actors: 1,
        mentionIn: 'comment',
      });
      expect(messageForRecord(record).key).to.equal('mention.post.community');
    });
  });
});
