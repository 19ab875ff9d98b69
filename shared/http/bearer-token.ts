/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 6750), else undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * Any bearer token sent (any run of non-space characters): what a refused call presented, whether
 * or not a check could read it as a token (METRICS_TOKEN may hold any character).
 */
export function presentedBearerToken(header: string | undefined): string | undefined {
  return /^Bearer +(\S+)\s*$/i.exec(header ?? '')?.[1];
}
