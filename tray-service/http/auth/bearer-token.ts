/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 6750), else undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header ?? '');
  return match?.[1];
}
