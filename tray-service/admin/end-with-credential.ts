import type { Request } from 'express';
import { callerExpiresAt, type AdminCaller } from './require-admin.ts';

/** setTimeout's longest delay; a later expiry is reached in steps of it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface CredentialWatch {
  /** Whether the request's credential still proves an admin (require-admin.ts's stillAdmin). */
  stillAdmin: (req: Request) => Promise<boolean | undefined>;
  /** How often it is asked. */
  checkMs: number;
  clock: () => number;
}

/**
 * A response that carries every payload (a tail, an export) lasts no longer than the credential
 * that opened it: `end` is called when the caller's session or JWT expires, and at the first check
 * after a sign-out (a check that cannot be made, Redis unreachable, ends nothing). Returns a stop,
 * for a response that ended otherwise.
 */
export function endWithCredential(
  req: Request,
  caller: AdminCaller,
  watch: CredentialWatch,
  end: () => void,
): () => void {
  const expiresAt = callerExpiresAt(caller);
  let expiry: NodeJS.Timeout | undefined;
  // An expiry past the longest delay is reached in steps: capped at it, the timer ended a response
  // whose credential had days left; left to the checks, it outlived the credential whenever they
  // could not be made.
  const arm = (at: number) => {
    const left = Math.max(0, at - watch.clock());
    expiry = left > MAX_TIMER_MS ? setTimeout(() => arm(at), MAX_TIMER_MS) : setTimeout(end, left);
    expiry.unref();
  };
  if (expiresAt !== undefined) arm(expiresAt);
  const checks = setInterval(() => {
    void watch.stillAdmin(req).then((admin) => {
      if (admin === false) end();
    });
  }, watch.checkMs);
  checks.unref();
  return () => {
    clearTimeout(expiry);
    clearInterval(checks);
  };
}
