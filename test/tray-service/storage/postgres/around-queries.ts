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
    new Proxy(client, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property === 'query')
          return (...args: unknown[]) =>
            around(args[0], () =>
              (target.query as (...a: unknown[]) => Promise<pg.QueryResult>).apply(target, args),
            );
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
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
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
      return (first: string | SqlQuery, values?: unknown[]) =>
        around(
          typeof first === 'string'
            ? { text: first, values: values ?? [] }
            : { text: first.text, values: first.values ?? [] },
          () => target.query(first as string, values),
        );
    },
  });
}
