import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits before another try at records a concurrent writer holds (its claim of their next version):
 * a random time, so writers that collided spread apart, growing with `round` to at most 250 ms. A
 * writer that won a claim may take seconds to finish on a loaded host (20 tries of at most 100 ms
 * gave up while the winner was still writing, under a load average of 12).
 */
export function backOff(round: number): Promise<void> {
  return sleep(Math.random() * Math.min(10 * round, 250));
}
