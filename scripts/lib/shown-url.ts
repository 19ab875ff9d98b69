/**
 * A URL as the stack prints it: its password, if any, replaced (the operator's own URLs included).
 * One the URL parser refuses (a password with an unencoded `/`, say) has everything from its scheme
 * to its last `@` replaced: a password may hold any character but the `@` that ends it.
 */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '****';
    return parsed.toString();
  } catch {
    return url.replace(
      /^([a-z][a-z0-9+.-]*:\/\/)?.*@/is,
      (_match, scheme: string | undefined) => `${scheme ?? ''}****@`,
    );
  }
}
