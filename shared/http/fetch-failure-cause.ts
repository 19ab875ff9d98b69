/**
 * Why a fetch failed to reach its server: fetch's own message is only "fetch failed", and its
 * `cause` says why (ECONNREFUSED, ENOTFOUND, ...), by code when it has one. Undefined for an error
 * that carries no such cause.
 */
export function fetchFailureCause(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return typeof cause?.message === 'string' ? cause.message : undefined;
}
