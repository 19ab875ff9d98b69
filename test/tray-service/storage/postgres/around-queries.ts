import type pg from 'pg';
import type { SqlQuery } from '../../../../tray-service/storage/postgres/sql-conditions.ts';

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
  return queriesThrough(pool, (args, run) => around(args[0], run));
}

/**
 * `target` (a pool or a client) with each `query` call passed through `around`, given the call's
 * arguments and `run`, which sends it as it was made; its other methods are its own, bound to it.
 */
function queriesThrough<T extends pg.Pool | pg.PoolClient>(
  target: T,
  around: (args: unknown[], run: () => Promise<pg.QueryResult>) => Promise<unknown>,
): T {
  return new Proxy(target, {
    get(inner, property) {
      const value = Reflect.get(inner, property, inner) as unknown;
      if (property === 'query')
        return (...args: unknown[]) =>
          around(args, () =>
            (inner.query as (...a: unknown[]) => Promise<pg.QueryResult>).apply(inner, args),
          );
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(inner) : value;
    },
  });
}

/**
 * `pool` whose checked-out clients (`connect`, as a transaction takes one) have each `query` call
 * passed through `around` as aroundQueries does: how a test observes the statements sent inside a
 * transaction. The client's other methods, `release` among them, are the client's own.
 */
export function aroundClientQueries(
  pool: pg.Pool,
  around: (text: unknown, run: () => Promise<pg.QueryResult>) => Promise<unknown>,
): pg.Pool {
  const wrap = (client: pg.PoolClient): pg.PoolClient =>
    queriesThrough(client, (args, run) => around(args[0], run));
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'connect') return Reflect.get(target, property, receiver) as unknown;
      // The pool's own `query` checks out a client with a callback: that one is left as it is.
      return (...args: unknown[]) =>
        args.length > 0
          ? (target.connect as (...a: unknown[]) => unknown).apply(target, args)
          : target.connect().then(wrap);
    },
  });
}

/**
 * `client` (one a test checked out, a transaction's) with each `query` call passed through
 * `around`, given its statement as text and values whichever form the call took (text and values,
 * or a query config), and `run`, which sends the call as it was made.
 */
export function aroundClient(
  client: pg.PoolClient,
  around: (statement: SqlQuery, run: () => Promise<pg.QueryResult>) => Promise<unknown>,
): pg.PoolClient {
  return queriesThrough(client, ([first, values], run) =>
    around(
      typeof first === 'string'
        ? { text: first, values: (values as unknown[] | undefined) ?? [] }
        : { text: (first as SqlQuery).text, values: (first as SqlQuery).values ?? [] },
      run,
    ),
  );
}
