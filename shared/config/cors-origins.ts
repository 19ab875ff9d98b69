import { z } from 'zod';
import { listEntries } from '../text/list-entries.ts';

/** Which web origins may call from a browser: any (`*`), or exactly those listed. */
export type CorsOrigins = '*' | readonly string[];

/** An origin as a browser sends it in `Origin`: scheme, host and port, nothing after them. */
function originProblem(entry: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(entry);
  } catch {
    return `${entry} is not an origin (expected scheme://host[:port], e.g. https://app.example.com)`;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return `${entry}: expected an http or https origin`;
  // A browser's Origin is the serialised origin: lower case, no default port, no path or slash.
  if (parsed.origin !== entry)
    return `${entry} is not an origin as a browser sends it; write ${parsed.origin}`;
  return undefined;
}

/**
 * A comma-separated list of origins (`https://app.example.com,http://localhost:5173`) or `*`;
 * empty or unset: none. Each must be written as browsers send it, so a trailing slash or an upper
 * case letter, which would never match, is an error naming the entry rather than a silent refusal.
 */
export const corsOrigins = () =>
  z
    .string()
    .transform((value, ctx): CorsOrigins => {
      let entries: string[];
      try {
        entries = listEntries(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
      if (entries.length === 1 && entries[0] === '*') return '*';
      for (const entry of entries) {
        const problem =
          entry === '*' ? '* stands alone: any origin, or a list of them' : originProblem(entry);
        if (problem !== undefined) {
          ctx.addIssue({ code: 'custom', message: problem });
          return z.NEVER;
        }
      }
      return entries;
    })
    .default([]);
