import type { CollectionSpec } from '../setup/collection-spec.ts';
import { TRAY_PROCESSING_ORDER } from '../collection-names.ts';

/** tray_processing_order: the blocks of places handed out (processing-order.ts); `_id` only. */
export const processingOrderCollection: CollectionSpec = {
  name: TRAY_PROCESSING_ORDER,
  indexes: [],
};

/** One block of places: from `_id` to `end`, both included. */
export interface ProcessingOrderDoc {
  _id: number;
  end: number;
  /** When it was handed out (the process clock): blocks a day old below a newer one are deleted. */
  at: Date;
}
