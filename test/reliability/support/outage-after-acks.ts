export interface OutageOptions {
  /** The outage starts once this many deliveries were acknowledged (200). */
  acks: number;
  /** Takes the server down, e.g. () => redis.stop('SIGKILL'). */
  stop: () => Promise<void>;
  /** Brings it back (same port and data directory). */
  start: () => Promise<void>;
  /** How long it stays down. */
  downMs: number;
}

export interface Outage {
  /** Pass as sendBurst's onAck. */
  readonly onAck: (acked: number) => void;
  /** Waits until the server is back; throws if the burst ended before the outage began. */
  done(): Promise<void>;
  /** performance.now() when the outage began. */
  startedAt(): number | undefined;
  /** How long the server was down (stop + downMs + start), once it is back. */
  downForMs(): number | undefined;
}

/**
 * The fault the scenarios share: a server (Redis, FerretDB) taken down once a share of the burst
 * is acknowledged, started again `downMs` later, while the burst goes on.
 */
export function outageAfterAcks(options: OutageOptions): Outage {
  let outage: Promise<void> | undefined;
  let started: number | undefined;
  let ended: number | undefined;
  return {
    onAck(acked) {
      if (outage || acked < options.acks) return;
      started = performance.now();
      outage = (async () => {
        await options.stop();
        await new Promise((resolve) => setTimeout(resolve, options.downMs));
        await options.start();
        ended = performance.now();
      })();
    },
    async done() {
      if (!outage) throw new Error(`the outage never began: fewer than ${options.acks} acknowledgements`);
      await outage;
    },
    startedAt: () => started,
    downForMs: () => (started === undefined || ended === undefined ? undefined : Math.round(ended - started)),
  };
}
