/** A queue's job counts by state, as its adapter (bull) reports them. */
export interface QueueCounts {
  waiting: number;
  active: number;
  /** Jobs of a paused queue not processed yet: bull moves its waiting jobs here, and adds new ones here. */
  paused: number;
  delayed: number;
  failed: number;
  completed: number;
}

/** A queue the stats read: its name and its counts. */
export interface CountedQueue {
  readonly name: string;
  counts(): Promise<QueueCounts>;
}

/** GET /admin/stats/queue: every queue's counts, read at once. */
export async function queueStats(queues: readonly CountedQueue[]) {
  return {
    queues: await Promise.all(queues.map(async (queue) => ({ name: queue.name, ...(await queue.counts()) }))),
  };
}
