import type { ChildProcess } from 'node:child_process';
import { stopChild } from './stop-child.ts';

/**
 * Every process a tool started and has not seen exit, from the moment it was spawned, with how it
 * is stopped. A tool signalled while a start was still under way (a server spawned, not yet
 * listening, so the tool holds no handle to it yet) stops it too: stopOnSignal stops what is
 * left here after the tool's own stop.
 */
const started = new Map<ChildProcess, () => Promise<void>>();
/** Set once stopStarted runs: a start still under way that spawns a process then has it stopped. */
let stopping: Promise<void>[] | undefined;

/** Keeps `child` until it exits; `stop` as its starter stops it (default SIGTERM, then SIGKILL). */
export function trackStarted(child: ChildProcess, stop: () => Promise<void> = () => stopChild(child)): void {
  // Never spawned (its command missing): no process, and no 'exit' to wait for.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  started.set(child, stop);
  child.once('exit', () => started.delete(child));
  stopping?.push(stop().catch(() => undefined));
}

/**
 * Stops every tracked process still running, all at once, and any spawned while they stop;
 * resolves when they have exited.
 */
export async function stopStarted(): Promise<void> {
  stopping ??= [];
  stopping.push(...[...started.values()].map((stop) => stop().catch(() => undefined)));
  for (let awaited = 0; awaited < stopping.length;) {
    awaited = stopping.length;
    await Promise.all(stopping);
  }
}
