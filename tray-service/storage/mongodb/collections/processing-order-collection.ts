import type { CollectionSpec } from './collection-spec.ts';
import { TRAY_PROCESSING_ORDER } from './collection-names.ts';

/** tray_processing_order: the blocks of places handed out (processing-order.ts); `_id` only. */
export const processingOrderCollection: CollectionSpec = {
  name: TRAY_PROCESSING_ORDER,
  indexes: [],
};

/** One block of places: from `_id` to `end`, both included. */
export interface ProcessingOrderDoc {
  _id: number;
  end: number;
  /** When it was handed out (the process clock), for whoever looks at the collection. */
  at: Date;
  /**
   * Random, the allocator's own: tells its block from one inserted at the same `_id` later, so an
   * allocator deletes only its own and checks the very block it read (processing-order.ts).
   * Absent on blocks of earlier versions.
   */
  token?: string;
}
