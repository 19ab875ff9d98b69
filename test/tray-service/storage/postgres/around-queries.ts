import type pg from 'pg';

/**
 * `pool` with each `query` call passed through `around`, given the call's first argument (its SQL
 * text, or a query config) and `run`, which sends the call as it was made: how a test observes the
 * statements a write sends, fails one, or runs another step at a chosen point of it. Only `query`
 * is wrapped; a client taken with `connect` sends its statements unobserved.
 */
export function aroundQueries(
  pool: pg.Pool,
  around: (text: unknown, run: () => Promise<pg.QueryResult>) => Promise<unknown>,
): pg.Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
      return (...args: unknown[]) =>
        around(args[0], () =>
          (target.query as (...a: unknown[]) => Promise<pg.QueryResult>).apply(target, args),
        );
    },
  });
}
