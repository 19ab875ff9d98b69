/**
 * The MongoDB driver's server heartbeats in progress, by server address, and which of them have run
 * for longer than any healthy heartbeat can (watch-heartbeats.ts decides what to do about those).
 */
export class HeartbeatLedger {
  readonly #startedAt = new Map<string, number>();

  started(address: string, at: number): void {
    this.#startedAt.set(address, at);
  }

  ended(address: string): void {
    this.#startedAt.delete(address);
  }

  /** Addresses whose current heartbeat started more than `limitMs` before `now`. */
  stuck(now: number, limitMs: number): string[] {
    return [...this.#startedAt].filter(([, at]) => now - at > limitMs).map(([address]) => address);
  }

  clear(): void {
    this.#startedAt.clear();
  }
}
