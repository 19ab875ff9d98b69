/**
 * How long after its arrival a request waits for its spool write: the platform's own deadline
 * (docs/contract.md#answer). Past it the platform counts the delivery failed whatever the answer
 * (it may send it again, or not), so a 503 then frees the request instead of holding it for as
 * long as the disk stalls. The write goes on, also for a request already past the deadline when it
 * reaches the spool: the event is kept and processed even if no retry comes, and a retry that does
 * is dropped as a redelivery, except an undated join, leave or profile update, queued again as
 * every delivery of one is (docs/receiver.md#spool). The spool's readiness check fails while an
 * append has waited longer (open-spool.ts).
 */
export const SPOOL_DEADLINE_MS = 1_500;
