import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { TRAY_PROCESSING_ORDER } from '../collection-names.ts';
import { isDuplicateKey } from '../compare-and-set/is-duplicate-key.ts';
import type { ProcessingOrderDoc } from './processing-order-collection.ts';

/**
 * Places handed out before the tray kept the order: changes stored before count as 0, kept
 * actions as 1, so every older change is before every older action (the order the take-back rule
 * of earlier versions computed their records in).
 */
const FIRST_PLACE = 2;

/** Places between two clean-ups of the blocks a day old. */
const CLEAN_EVERY = 1_024;

/** Rounds at a lost insert before giving up (each loss is another allocator's progress). */
const MAX_ROUNDS = 1_000;

/**
 * The first of `count` consecutive places in the order the tray processes joins, leaves and kept
 * actions in (docs/tray-rules.md#leaving-and-rejoining-a-community). FerretDB's updates are not
 * atomic under concurrency, so no counter is incremented: each block is an insert whose `_id` is
 * the place after the highest block read, and the unique `_id` makes one of two allocators that
 * read the same block lose and read again. A block inserted after another was read is higher than
 * it: what a job read before it allocates is before it in the order.
 */
export async function nextProcessed(db: Db, count: number): Promise<number> {
  const collection = db.collection<ProcessingOrderDoc>(TRAY_PROCESSING_ORDER);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // By the `_id` index (a filter on it, so the server walks the index from its end).
    const [last] = await collection.find({ _id: { $gte: 0 } }, { sort: { _id: -1 }, limit: 1 }).toArray();
    const start = last ? last.end + 1 : FIRST_PLACE;
    try {
      await collection.insertOne({ _id: start, end: start + Math.max(count, 1) - 1, at: new Date() });
    } catch (error) {
      if (isDuplicateKey(error)) continue;
      throw error;
    }
    // Blocks below this one a day old: no allocator still holds a read of them (one that read a
    // block and found its place free after the block went would hand it out again), and the
    // highest always stays. No TTL index: it would take the highest too. Only when the block
    // crosses a multiple of CLEAN_EVERY places: one command per write saved on the others.
    const end = start + Math.max(count, 1) - 1;
    if (Math.floor(end / CLEAN_EVERY) !== Math.floor((start - 1) / CLEAN_EVERY))
      await collection.deleteMany({ _id: { $lt: start }, at: { $lt: new Date(Date.now() - DAY_MS) } });
    return start;
  }
  throw new Error(`tray processing order: no place after ${MAX_ROUNDS} rounds`);
}
