import { z } from 'zod';

// Reusable variable types. Each message says what is expected, because it is shown to an operator.

/**
 * A variable read by a pure parser whose error message names the bad entry (a list's empty place,
 * an unknown name): that message is the variable's. `missing`: the message when it is required.
 */
export const parsedWith = <T>(parse: (text: string) => T, missing?: string) => {
  const text = missing === undefined ? z.string() : z.string({ error: missing });
  return text.transform((value, ctx) => {
    try {
      return parse(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
};

/**
 * A whole number written in decimal digits: z.coerce.number alone would also take `0x10`, `1e2`
 * or `2.0`, which an operator never means as a count or a port.
 */
export const wholeNumber = (message: string, min: number, max: number) =>
  z
    .string({ error: message })
    .trim()
    .regex(/^\d+$/, { error: message })
    .transform(Number)
    .pipe(z.number().int({ error: message }).min(min, { error: message }).max(max, { error: message }));

export const port = (fallback: number) =>
  wholeNumber('expected a TCP port number (1-65535)', 1, 65535).default(fallback);

export const positiveInt = (fallback: number, max = Number.MAX_SAFE_INTEGER) =>
  wholeNumber(`expected a whole number from 1 to ${max}`, 1, max).default(fallback);

/** A whole number from `min` to `max`: for a duration whose smallest values only do harm. */
export const intInRange = (fallback: number, min: number, max: number) =>
  wholeNumber(`expected a whole number from ${min} to ${max}`, min, max).default(fallback);

/**
 * Whether a URL's user name and password (before its `@`) decode: a password written as it is, a
 * lone `%` in it, makes the database and Redis drivers throw a URIError when they connect, where
 * start-up waits for a server that does not answer.
 */
export function userinfoDecodes(value: string): boolean {
  const userinfo = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)@/.exec(value)?.[1];
  if (userinfo === undefined) return true;
  try {
    decodeURIComponent(userinfo);
    return true;
  } catch {
    return false;
  }
}

/** The refinement of userinfoDecodes, with its message: never the URL, which holds the password. */
export const USERINFO_DECODES = [
  userinfoDecodes,
  { error: 'its user name or password holds a "%" that starts no escape: write each "%" in it as %25' },
] as const;

/** `value` as the URL parser reads it, or undefined where it reads none. */
function parsedUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * For a URL with credentials: no "@" after its host. One there is a password's rest: a "/", "?"
 * or "#" in it not escaped ends the host early, and the driver connects elsewhere (to the user
 * name as host) and may quote the password's end in its errors. Never repeats the value.
 */
export const PASSWORD_NOT_SPLIT = [
  (value: string): boolean => {
    const parsed = parsedUrl(value);
    return !parsed || !`${parsed.pathname}${parsed.search}${parsed.hash}`.includes('@');
  },
  {
    error:
      'its path, query or fragment holds an "@": a password\'s "/", "?" or "#" must be escaped (write "/" as %2F, "?" as %3F, "#" as %23)',
  },
] as const;

export const url = (protocols: readonly string[], fallback?: string) => {
  const named = new RegExp(`^(${protocols.join('|')})://`, 'i');
  const schema = z
    .string()
    // With the right scheme, a URL that does not parse is nearly always a password's "/", "?" or
    // "#" not escaped (before it, the rest reads as a port that is none): said so, not the value.
    .refine((value) => !named.test(value) || parsedUrl(value) !== undefined, {
      error:
        'does not read as a URL: a "/", "?", "#" or "@" in its user name or password must be escaped (write "/" as %2F, "?" as %3F, "#" as %23, "@" as %40)',
      abort: true,
    })
    .refine(
      (value) => {
        const protocol = parsedUrl(value)?.protocol.replace(/:$/, '');
        return protocol !== undefined && protocols.includes(protocol);
      },
      { error: `expected a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}` },
    )
    .refine(...USERINFO_DECODES);
  return fallback === undefined ? schema : schema.default(fallback);
};

export const onOff = (fallback: 'on' | 'off') =>
  z.enum(['on', 'off'], { error: 'expected "on" or "off"' }).default(fallback);

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    error: 'expected one of fatal, error, warn, info, debug, trace, silent',
  })
  .default('info');

/** 1-63 letters, digits, `_` or `-`: a name safe as a MongoDB database name or a Redis key prefix. */
export const IDENTIFIER = /^[A-Za-z0-9_-]{1,63}$/;

export const optionalIdentifier = z
  .string()
  .regex(IDENTIFIER, { error: 'expected 1-63 letters, digits, "_" or "-"' })
  .optional();

export const identifier = (fallback: string) => optionalIdentifier.default(fallback);

const SECONDS_PER_UNIT = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const LONGEST_DURATION_S = 366 * 86_400;

/**
 * A length of time in whole seconds: digits alone are seconds, or digits and one unit (`90s`,
 * `30m`, `24h`, `7d`); at least a second and at most a year, which no token lifetime exceeds.
 */
export const durationSeconds = () => {
  const message = 'expected whole seconds or a duration such as 3600, 90m, 24h or 7d (1 s to 366 d)';
  return z
    .string({ error: message })
    .trim()
    .regex(/^\d+[smhd]?$/, { error: message })
    .transform((value) => {
      const unit = value.at(-1) as string;
      return unit in SECONDS_PER_UNIT
        ? Number(value.slice(0, -1)) * SECONDS_PER_UNIT[unit as keyof typeof SECONDS_PER_UNIT]
        : Number(value);
    })
    .pipe(z.number().int().min(1, { error: message }).max(LONGEST_DURATION_S, { error: message }));
};
