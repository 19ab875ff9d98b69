import type { Collection, Db, Document } from 'mongodb';

/**
 * `db`, where `method` of the collection `name` runs as `replace` makes it from the real one (bound
 * to the real collection): a step of another writer run at an exact point of a call on the real
 * server, or the answer the server gave changed. Every other collection and method is the real one.
 */
export function withCollectionMethod<K extends keyof Collection<Document>>(
  db: Db,
  name: string,
  method: K,
  replace: (original: Collection<Document>[K]) => Collection<Document>[K],
): Db {
  const bound = (target: object, key: string | symbol) => {
    const value: unknown = Reflect.get(target, key);
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  };
  return new Proxy(db, {
    get(target, key) {
      if (key !== 'collection') return bound(target, key);
      return (wanted: string) => {
        const collection = target.collection(wanted);
        if (wanted !== name) return collection;
        return new Proxy(collection, {
          get(found, property) {
            if (property !== method) return bound(found, property);
            return replace(bound(found, property) as Collection<Document>[K]);
          },
        });
      };
    },
  });
}
