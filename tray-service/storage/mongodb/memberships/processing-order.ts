import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { TRAY_PROCESSING_ORDER } from '../collections/collection-names.ts';
import { isDuplicateKey } from '../driver/is-duplicate-key.ts';
import type { ProcessingOrderDoc } from '../collections/processing-order-collection.ts';
import { StorageBusyError } from '../../storage-busy-error.ts';

/**
 * Places handed out before the tray kept the order: changes stored before count as 0, kept
 * actions as 1, so every older change is before every older action (the order the take-back rule
 * of earlier versions computed their records in).
 */
const FIRST_PLACE = 2;

/**
 * Places between two cleanings: the collection keeps about this many blocks (plus one per
 * allocation in flight), so reading the highest stays cheap on FerretDB, which sorts and limits
 * nothing on the server and reads the whole collection for it.
 */
const CLEAN_EVERY = 32;

/** Rounds at a lost insert before giving up (each loss is another allocator's progress). */
const MAX_ROUNDS = 1_000;

/**
 * The longest pause after a lost round (ms): allocators that lost together, tried again at once,
 * would meet again on the next block, each allocation costing a round per allocator at once.
 */
const MAX_PAUSE_MS = 64;

/** A random pause after `lost` lost rounds, up to twice as long each time. */
const pauseAfter = (lost: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** lost, MAX_PAUSE_MS)));

/**
 * The first of `count` consecutive places in the order the tray processes joins, leaves and kept
 * actions in (docs/tray-rules.md#leaving-and-rejoining-a-community). FerretDB's updates are not
 * atomic under concurrency, so no counter is incremented: each block is an insert whose `_id` is
 * the place after the highest block read, and the unique `_id` makes one of two allocators that
 * read the same block lose and read again. A block inserted after another was read is higher than
 * it: what a job read before it allocates is before it in the order.
 *
 * Blocks well below the newest are deleted often (cleanBelow). That opens one interleaving: a slow
 * allocator read block H as the highest, others allocated past it and deleted H and the block
 * after it, then the slow one's insert of H.end + 1 succeeds although that place was handed out.
 * So after its insert an allocator reads H again (by `_id`, with the random token H had): blocks
 * are deleted in ascending order, so if the place after H had been handed out and deleted, H was
 * deleted before it and is gone. Then the allocator deletes its own block (by `_id` and its token)
 * and reads again. Such a block is never the highest (the cleaner that deleted the old one keeps
 * its own, higher block), so no allocator reads it as H.
 */
export async function nextProcessed(
  db: Db,
  count: number,
  { maxRounds = MAX_ROUNDS }: { maxRounds?: number } = {},
): Promise<number> {
  const collection = db.collection<ProcessingOrderDoc>(TRAY_PROCESSING_ORDER);
  const size = Math.max(count, 1);
  for (let round = 0; round < maxRounds; round++) {
    if (round > 0) await pauseAfter(round);
    // A filter on `_id` (MongoDB walks its index from the end; FerretDB reads the few blocks kept).
    const [last] = await collection.find({ _id: { $gte: 0 } }, { sort: { _id: -1 }, limit: 1 }).toArray();
    if (!last) {
      // An empty order: insert the block before the first place (it hands nothing out) and read
      // again, so the first allocation's H is checked like any other. Read again, not taken as H:
      // an allocator that read the empty order late inserts it again after its deletion, and
      // checking that copy would prove nothing; read again, it is never the highest.
      await insertOrLose(collection, {
        _id: FIRST_PLACE - 1,
        end: FIRST_PLACE - 1,
        at: new Date(),
        token: randomUUID(),
      });
      continue;
    }
    const start = last.end + 1;
    const token = randomUUID();
    if (!(await insertOrLose(collection, { _id: start, end: start + size - 1, at: new Date(), token })))
      continue;
    const read = await collection.findOne({ _id: last._id }, { projection: { _id: 0, token: 1 } });
    // Blocks of earlier versions have no token; they are never inserted again.
    if (!read || read.token !== last.token) {
      await collection.deleteOne({ _id: start, token });
      continue;
    }
    // Only when the block crosses a multiple of CLEAN_EVERY places: two commands saved on the others.
    if (Math.floor((start + size - 1) / CLEAN_EVERY) !== Math.floor((start - 1) / CLEAN_EVERY))
      await cleanBelow(collection, last._id);
    return start;
  }
  // Others kept taking the places: a busy moment, not this job's fault (the worker waits and runs
  // it again without spending an attempt).
  throw new StorageBusyError(`tray processing order: no place after ${maxRounds} rounds`);
}

/** Inserts `doc`; false when its `_id` is taken (another allocator was first). */
async function insertOrLose(
  collection: Collection<ProcessingOrderDoc>,
  doc: ProcessingOrderDoc,
): Promise<boolean> {
  try {
    await collection.insertOne(doc);
    return true;
  } catch (error) {
    if (isDuplicateKey(error)) return false;
    throw error;
  }
}

/**
 * Deletes the blocks below `below` (the block this allocator read: it and the one just inserted
 * stay, so the highest always stays), lowest first: one ordered delete command whose statements
 * run one after another on MongoDB and FerretDB alike, so a block is gone only once every block
 * below it that this cleaner listed is. nextProcessed's check relies on that order.
 */
async function cleanBelow(collection: Collection<ProcessingOrderDoc>, below: number): Promise<void> {
  const ids = (await collection.find({ _id: { $lt: below } }, { projection: { _id: 1 } }).toArray())
    .map((doc) => doc._id)
    .sort((a, b) => a - b);
  if (ids.length === 0) return;
  await collection.bulkWrite(
    ids.map((_id) => ({ deleteOne: { filter: { _id } } })),
    { ordered: true },
  );
}

/**
 * The places stored under `ids` in `collectionName` (the documents an insert reported as duplicates: a redelivery
 * keeps the place it took first), by `_id`; a document stored before the order has none. One
 * look-up by `_id` equality each, not one `$in`: FerretDB pushes no `$in` down and reads the whole
 * collection for it (seconds with a few hundred thousand documents), but pushes `_id` equality
 * down; MongoDB serves both by `_id`. Few: only redeliveries have duplicates.
 */
export async function storedPlaces(
  db: Db,
  collectionName: string,
  ids: readonly string[],
): Promise<Map<string, number | undefined>> {
  const collection = db.collection<{ _id: string; processed?: number }>(collectionName);
  const places = new Map<string, number | undefined>();
  for (const _id of ids) {
    const found = await collection.findOne({ _id }, { projection: { _id: 1, processed: 1 } });
    if (found) places.set(_id, found.processed);
  }
  return places;
}
