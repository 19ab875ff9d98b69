import { randomUUID } from 'node:crypto';
import { jobScope } from '../../../../shared/async/job-scope.ts';

/**
 * Who a write's version claims belong to (claim-versions.ts): the job the write runs for (its
 * dedupe key, from the job scope the apply-job use case sets), so a retry of that job, in this
 * process or another, recognises its own claims; outside any job (an API request) a one-off owner,
 * since a retried request is a new request.
 */
export function claimOwner(): string {
  return jobScope.current() ?? `api:${randomUUID()}`;
}
