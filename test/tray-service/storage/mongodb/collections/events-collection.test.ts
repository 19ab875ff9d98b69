import { expect } from 'chai';
import type { EventsFilter } from '../../../../../tray-service/domain/events-filter.ts';
import { eventsCollection } from '../../../../../tray-service/storage/mongodb/collections/events-collection.ts';
import { eventsQuery } from '../../../../../tray-service/storage/mongodb/events/event-reads.ts';

// A filter no index starts with is answered by walking the newest-first index and reading every
// event until a page is full: for a rare status (`?status=invalid` among millions applied), the
// whole collection on every page and every poll. The hot-query check cannot see that: such a walk
// is served by an index and sorts nothing in memory.
describe('the events collection (MongoDB)', () => {
  it('has, for every admin filter on its own, an index that starts with its field, in the list’s order', () => {
    const filters: EventsFilter[] = [
      { event: 'post.didCreate' },
      { webhook: 'main' },
      { status: 'invalid' },
      { userId: 'u-a' },
      { communityId: 'c-x' },
      { moderation: 'flag' },
    ];
    const keys = eventsCollection.indexes.map((index) => JSON.stringify(index.key));
    for (const filter of filters) {
      const [field] = Object.keys(eventsQuery(filter, new Date())).filter((name) => name !== 'expiresAt');
      if (field === undefined) throw new Error(`no field for ${JSON.stringify(filter)}`);
      expect(keys, field).to.include(JSON.stringify({ [field]: 1, receivedAt: -1, _id: -1 }));
    }
  });
});
