import { expect } from 'chai';
import { declaredIndexServing, type Selection } from './declared-index-serving.ts';

const indexes = [
  { name: 'user_history', key: { userId: 1, lastUpdate: -1, _id: -1 } },
  { name: 'user_unread', key: { userId: 1, hasRead: 1, unreadAt: 1, expiresAt: 1 } },
  { name: 'received_desc', key: { receivedAt: -1, _id: -1 } },
] as const;
const verdict = (selection: Omit<Selection, 'collection'>) =>
  declaredIndexServing({ collection: 'c', ...selection }, indexes);

describe('declaredIndexServing (MongoDB’s planning rules over declared indexes)', () => {
  it('serves a filter whose first index key it names, with further conditions beside it', () => {
    expect(verdict({ command: 'find', filter: { userId: 'u', expiresAt: { $gt: 1 } } })).to.include({
      served: true,
      index: 'user_history',
    });
    expect(verdict({ command: 'delete', filter: { _id: 'r', version: 3 } })).to.include({ index: '_id_' });
  });

  it('serves a sort that follows the equality-bound prefix, in the index’s directions or all reversed', () => {
    const page = { command: 'find', filter: { userId: 'u', lastUpdate: { $lt: 9 } } } as const;
    expect(verdict({ ...page, sort: { lastUpdate: -1, _id: -1 } })).to.include({ index: 'user_history' });
    expect(verdict({ ...page, sort: { lastUpdate: 1, _id: 1 } })).to.include({ index: 'user_history' });
    expect(verdict({ ...page, sort: { lastUpdate: -1, _id: 1 } })).to.include({ served: false });
  });

  it('serves a sort alone from an index in that order (a scan in order, no sort in memory)', () => {
    expect(
      verdict({ command: 'find', filter: { expiresAt: { $gt: 1 } }, sort: { receivedAt: -1, _id: -1 } }),
    ).to.include({ index: 'received_desc' });
  });

  it('refuses a filter none of whose fields leads an index', () => {
    const found = verdict({ command: 'find', filter: { hasRead: false } });
    expect(found).to.include({ served: false });
    expect(found)
      .to.have.property('why')
      .that.matches(/user_unread: its first key userId/);
  });

  it('serves a count only from an index holding every field of its filter', () => {
    const unread = { userId: 'u', hasRead: false, unreadAt: { $gt: 1 }, expiresAt: { $gt: 2 } };
    expect(verdict({ command: 'count', filter: unread })).to.include({ index: 'user_unread' });
    const found = verdict({ command: 'count', filter: { ...unread, verb: { $nin: ['mention'] } } });
    expect(found).to.include({ served: false });
    expect(found)
      .to.have.property('why')
      .that.matches(/reads documents for verb/);
  });

  it('serves a top-level $or alone when every clause is served, each on its own index', () => {
    const unread = { hasRead: false, unreadAt: { $gt: 1 }, expiresAt: { $gt: 2 } };
    const clauses = [
      { userId: { $in: ['u', 'v'] }, ...unread },
      { userId: 'w', ...unread },
    ];
    expect(verdict({ command: 'count', filter: { $or: clauses } })).to.deep.equal({
      served: true,
      index: 'user_unread',
    });
    const found = verdict({ command: 'count', filter: { $or: [...clauses, { hasRead: false }] } });
    expect(found).to.include({ served: false });
    expect(found)
      .to.have.property('why')
      .that.matches(/^\$or clause 2: .*user_unread: its first key userId/);
  });

  // A find's `$and` beside the fields an index is bounded by narrows the documents the scan
  // fetches, not the scan: as any other condition on a field outside the index.
  it('reads a find’s top-level $and beside its fields as a residual condition, but not a count’s', () => {
    const inForce = { $and: [{ $or: [{ until: null }, { until: { $gt: 5 } }] }] };
    expect(
      verdict({ command: 'find', filter: { userId: 'u', ...inForce }, sort: { lastUpdate: -1 } }),
    ).to.deep.equal({ served: true, index: 'user_history' });
    expect(verdict({ command: 'find', filter: { ...inForce } })).to.include({ served: false });
    expect(verdict({ command: 'count', filter: { userId: 'u', ...inForce } })).to.deep.equal({
      served: false,
      why: 'cannot tell for a top-level $and',
    });
  });

  it('says it cannot tell for a top-level $or beside other fields or under a sort, or an operator it does not know', () => {
    const or = { $or: [{ userId: 'u' }] };
    expect(verdict({ command: 'find', filter: { ...or, hasRead: false } })).to.deep.equal({
      served: false,
      why: 'cannot tell for a top-level $or',
    });
    expect(verdict({ command: 'find', filter: or, sort: { lastUpdate: -1 } })).to.deep.equal({
      served: false,
      why: 'cannot tell for a top-level $or',
    });
    expect(verdict({ command: 'find', filter: { userId: { $regex: 'u' } } })).to.include({ served: false });
  });
});
