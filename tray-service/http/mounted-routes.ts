import type { RequestHandler, Router } from 'express';

/** The checks in front of every caller's route on the tray API's listener. */
export interface CallerGuards {
  /** Run after the caller is known: the ban check and the per-user rate limit. */
  afterCaller: RequestHandler[];
  /** Bearer auth, then afterCaller: the guard of every tray call. */
  guard: RequestHandler[];
}

/**
 * Routes of another transport served on the tray API's listener (the live streams, the demo page).
 * The composition root builds them, so the API never imports the transports it hosts.
 */
export interface MountedRoutes {
  /** Where the router is mounted ('/notifications', '/'). */
  at: string;
  /** The full paths it serves: the request metrics' route label. */
  paths: readonly string[];
  /** The router, behind the API's own caller guards and clock. */
  router(guards: CallerGuards, now: () => number): Router;
}
