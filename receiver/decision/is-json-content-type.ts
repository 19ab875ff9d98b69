/**
 * True for `application/json`, optionally with `charset=utf-8` (any case, quoted or not). JSON is
 * UTF-8 by definition (RFC 8259, section 8.1); any other charset, media type or parameter garbage
 * is refused rather than guessed at, because the signature covers the exact bytes.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  if (header === 'application/json') return true; // what nearly every sender writes
  const [mediaType = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
  if (mediaType !== 'application/json') return false;
  return parameters.every((parameter) => parameter === '' || /^charset=(?:utf-8|"utf-8")$/.test(parameter));
}
