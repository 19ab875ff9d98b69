import { z } from 'zod';

// Reusable variable types. Each message says what is expected, because it is shown to an operator.

export const port = (fallback: number) =>
  z.coerce
    .number({ error: 'expected a TCP port number (1-65535)' })
    .int({ error: 'expected a TCP port number (1-65535)' })
    .min(1, { error: 'expected a TCP port number (1-65535)' })
    .max(65535, { error: 'expected a TCP port number (1-65535)' })
    .default(fallback);

export const positiveInt = (fallback: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ error: `expected a whole number from 1 to ${max}` })
    .int({ error: `expected a whole number from 1 to ${max}` })
    .min(1, { error: `expected a whole number from 1 to ${max}` })
    .max(max, { error: `expected a whole number from 1 to ${max}` })
    .default(fallback);

export const url = (protocols: readonly string[], fallback?: string) => {
  const schema = z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol.replace(/:$/, ''));
      } catch {
        return false;
      }
    },
    { error: `expected a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}` },
  );
  return fallback === undefined ? schema : schema.default(fallback);
};

export const onOff = (fallback: 'on' | 'off') =>
  z.enum(['on', 'off'], { error: 'expected "on" or "off"' }).default(fallback);

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    error: 'expected one of fatal, error, warn, info, debug, trace, silent',
  })
  .default('info');

/** A name safe to use as a MongoDB database name or a Redis key prefix. */
export const identifier = (fallback: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, { error: 'expected 1-63 letters, digits, "_" or "-"' })
    .default(fallback);
