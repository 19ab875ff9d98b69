import { expect } from 'chai';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { MAX_BULK_OPERATIONS } from '../../../../../tray-service/storage/mongodb/driver/coalesced-writes.ts';
import { markInBatches } from '../../../../../tray-service/storage/mongodb/records/mark-in-batches.ts';

/** Only the `_id` counts here: what markInBatches hands over, and how often. */
const record = (id: string) => ({ _id: id }) as unknown as TrayRecordDoc;

// MongoDB's cursor is no snapshot: a record a delivery moved along the index it walks (a new unread
// time, after the record's batch was written) can come again further on. FerretDB's cursor does not
// show this (it reads a snapshot), so the cursor here is the sequence MongoDB's can yield.
describe('MongoDB markInBatches', () => {
  it('hands each record to one batch only, when the cursor yields it again', async () => {
    async function* cursor(): AsyncGenerator<TrayRecordDoc> {
      for (let n = 0; n < MAX_BULK_OPERATIONS; n++) yield record(`r-${n}`);
      // r-1 again, after a delivery made it unread anew; then one record found for the first time.
      yield record('r-1');
      yield record('r-new');
    }
    const batches: string[][] = [];
    await markInBatches(cursor(), async (found) => {
      batches.push(found.map((doc) => doc._id));
      return [];
    });
    expect(batches).to.have.length(2);
    expect(batches[0]).to.have.length(MAX_BULK_OPERATIONS);
    expect(batches[1]).to.deep.equal(['r-new']);
  });
});
