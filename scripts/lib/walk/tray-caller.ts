import { hs256Token } from '../hs256-token.ts';

/** An answer of the tray API: its status, its JSON body and how long the call took. */
export interface TrayAnswer {
  status: number;
  // The walk checks each field it reads: a body that lacks one fails the step that expected it.
  body: Record<string, unknown>;
  ms: number;
}

/** A user's calls to the tray API, made as the docs' curl commands make them. */
export interface TrayCaller {
  readonly token: string;
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<TrayAnswer>;
  /** How many 429s the caller waited out so far (Retry-After), so a figure never hides them. */
  rateLimited(): number;
}

/**
 * A caller for `userId` with a token signed by the stack's JWT secret. The per-user rate limit
 * (100 calls per 5 s) is the product's, so a walk that pages a dense user's tray waits out the
 * `Retry-After` of a 429 and asks again, counting the waits; the time of a call is its last try.
 */
export async function trayCaller(base: string, jwtSecret: string, userId: string): Promise<TrayCaller> {
  const token = await hs256Token(jwtSecret, userId);
  let waits = 0;
  return {
    token,
    rateLimited: () => waits,
    async call(method, path, body) {
      for (;;) {
        const started = performance.now();
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        const ms = performance.now() - started;
        if (res.status === 429) {
          waits += 1;
          await new Promise((resolve) =>
            setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000),
          );
          continue;
        }
        return {
          status: res.status,
          body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
          ms,
        };
      }
    },
  };
}
