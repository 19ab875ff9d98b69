import type { Server } from 'node:http';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

// `bench:api --gc`: which of the process's garbage collections ran while one of its servers was
// answering a request. The API and the floor share one process (and one heap), and the client
// makes one call at a time, so a collection that lands inside a request's time is paid by that
// request, whichever server's allocations filled the young generation.

/** Per server: its requests, and the collections that ran while one of them was being answered. */
export interface GcDuring {
  requests: number;
  /** Young-generation collections (scavenges). */
  minor: number;
  minorMs: number;
  /** Mark-compact collections, incremental marking steps and weak-callback runs. */
  other: number;
  otherMs: number;
}

export interface GcTally {
  /**
   * Times every request of `server`, from its arrival to its answer handed to the socket, as the
   * side `sideOf` names for its URL.
   */
  watch(server: Server, sideOf: (url: string) => string): void;
  /** Forgets what ran so far (a warm-up's). */
  reset(): void;
  /** What ran during each side's requests since the last take or reset, and outside any request. */
  take(): Promise<Map<string, GcDuring>>;
  stop(): void;
}

const empty = (): GcDuring => ({ requests: 0, minor: 0, minorMs: 0, other: 0, otherMs: 0 });

export function startGcTally(): GcTally {
  let collections: PerformanceEntry[] = [];
  let windows: { side: string; start: number; end: number }[] = [];
  const observer = new PerformanceObserver((list) => collections.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    watch(server, sideOf) {
      server.prependListener('request', (req, res) => {
        const start = performance.now();
        const side = sideOf(req.url ?? '/');
        res.once('finish', () => windows.push({ side, start, end: performance.now() }));
      });
    },
    reset() {
      collections = [];
      windows = [];
    },
    async take() {
      // Entries reach the observer after the collection, on a later turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const tally = new Map<string, GcDuring>([['outside any request', empty()]]);
      const of = (side: string) => tally.get(side) ?? tally.set(side, empty()).get(side) ?? empty();
      for (const window of windows) of(window.side).requests += 1;
      const since = windows[0]?.start ?? 0;
      for (const entry of collections) {
        if (entry.startTime < since) continue;
        const during = windows.find((w) => entry.startTime >= w.start && entry.startTime < w.end);
        const counts = of(during?.side ?? 'outside any request');
        const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
        if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
          counts.minor += 1;
          counts.minorMs += entry.duration;
        } else {
          counts.other += 1;
          counts.otherMs += entry.duration;
        }
      }
      collections = [];
      windows = [];
      return tally;
    },
    stop: () => observer.disconnect(),
  };
}

/** Markdown rows: per side, its collections per 1,000 requests and their pauses. */
export function gcTable(userId: string, tally: Map<string, GcDuring>): string[] {
  const rows = [
    `| ${userId}: GC during | requests | scavenges | per 1,000 requests | scavenge ms (total, mean) | other GC | other GC ms |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [side, g] of tally) {
    const per = g.requests > 0 ? ((1000 * g.minor) / g.requests).toFixed(1) : '-';
    const mean = g.minor > 0 ? (g.minorMs / g.minor).toFixed(3) : '-';
    rows.push(
      `| ${side} | ${g.requests || '-'} | ${g.minor} | ${per} | ${g.minorMs.toFixed(1)}, ${mean} | ${g.other} | ${g.otherMs.toFixed(1)} |`,
    );
  }
  return rows;
}
