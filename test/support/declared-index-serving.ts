import type { Document } from 'mongodb';
import type { IndexSpec } from '../../tray-service/storage/mongodb/collections/collection-spec.ts';

/** A command's selection as the code sent it: its filter, and a find's sort. */
export interface Selection {
  command: 'find' | 'count' | 'update' | 'delete';
  collection: string;
  filter: Document;
  sort?: Document;
}

/** MongoDB's own index on `_id`, which every collection has. */
const ID_INDEX: Pick<IndexSpec, 'name' | 'key'> = { name: '_id_', key: { _id: 1 } };

const OPERATORS = new Set(['$eq', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$ne', '$exists']);

/** Whether a field's condition is an equality (a value, or `$eq`): what an index prefix can be bound by. */
function isEquality(condition: unknown): boolean {
  if (condition === null || typeof condition !== 'object' || condition instanceof Date) return true;
  if (Array.isArray(condition)) return true;
  const operators = Object.keys(condition);
  return operators.length === 1 && operators[0] === '$eq';
}

/** The filter's fields, or the reason this check cannot read it. */
function fieldsOf(filter: Document): { fields: Map<string, unknown> } | { unreadable: string } {
  const fields = new Map<string, unknown>();
  for (const [field, condition] of Object.entries(filter)) {
    if (field.startsWith('$')) return { unreadable: `a top-level ${field}` };
    if (condition !== null && typeof condition === 'object' && !(condition instanceof Date)) {
      const unknown = Object.keys(condition).find((op) => op.startsWith('$') && !OPERATORS.has(op));
      if (unknown) return { unreadable: `${unknown} on ${field}` };
    }
    fields.set(field, condition);
  }
  return { fields };
}

/**
 * The clauses of a filter that is one top-level `$or` and nothing else, without a sort: MongoDB
 * plans each clause on its own and answers from indexes only when every clause has one
 * (https://www.mongodb.com/docs/manual/reference/operator/query/or/#-or-clauses-and-indexes). An
 * `$or` beside other fields or under a sort is planned otherwise, and left unread.
 */
function orClauses(selection: Selection): Document[] | undefined {
  const { $or: clauses, ...rest } = selection.filter;
  if (!Array.isArray(clauses) || clauses.length === 0) return undefined;
  if (Object.keys(rest).length > 0 || Object.keys(selection.sort ?? {}).length > 0) return undefined;
  return clauses as Document[];
}

/**
 * The declared index that serves a selection as MongoDB plans it, or why none does. Pure; the
 * rules of MongoDB's planner for one index (https://www.mongodb.com/docs/manual/tutorial/equality-sort-range-guideline/):
 * - the index's first key is a condition of the filter (its bounds narrow the scan), or, for a
 *   find with a sort, the index gives that order;
 * - a sort is served when its keys follow the index's equality-bound prefix, in the index's
 *   directions or all reversed (no sort in memory);
 * - a count is served from the index alone: every field of its filter is a key of the index
 *   (no document is read to count it);
 * - a top-level `$or` alone is served when each of its clauses is (orClauses);
 * - a find's top-level `$and` beside other fields is a residual condition on the documents.
 */
export function declaredIndexServing(
  selection: Selection,
  indexes: readonly Pick<IndexSpec, 'name' | 'key'>[],
): { served: true; index: string } | { served: false; why: string } {
  const clauses = orClauses(selection);
  if (clauses) {
    const verdicts = clauses.map((filter) => declaredIndexServing({ ...selection, filter }, indexes));
    const refused = verdicts.flatMap((verdict, n) =>
      verdict.served ? [] : [`$or clause ${n}: ${verdict.why}`],
    );
    if (refused.length > 0) return { served: false, why: refused.join('; ') };
    return {
      served: true,
      index: [...new Set(verdicts.map((verdict) => (verdict.served ? verdict.index : '')))].join(', '),
    };
  }
  // A find's top-level `$and` narrows the documents the scan fetches, as a condition on a field
  // outside the index does; the index is chosen by the fields beside it. A count's would read the
  // documents, so it stays unread there.
  const { $and: residual, ...beside } = selection.filter;
  const read = fieldsOf(selection.command === 'find' && Array.isArray(residual) ? beside : selection.filter);
  if ('unreadable' in read) return { served: false, why: `cannot tell for ${read.unreadable}` };
  const { fields } = read;
  const sort = Object.entries(selection.sort ?? {}).map(([field, order]) => [field, Number(order)] as const);
  const tried: string[] = [];
  for (const index of [ID_INDEX, ...indexes]) {
    const keys = Object.entries(index.key).map(([field, order]) => [field, Number(order)] as const);
    let prefix = 0;
    while (prefix < keys.length && isEquality(fields.get(keys[prefix]![0])) && fields.has(keys[prefix]![0]))
      prefix += 1;
    const ordered = sort.filter(([field]) => !(isEquality(fields.get(field)) && fields.has(field)));
    const following = keys.slice(prefix, prefix + ordered.length);
    const sortServed =
      ordered.length === following.length &&
      (ordered.every(([field, order], n) => following[n]![0] === field && following[n]![1] === order) ||
        ordered.every(([field, order], n) => following[n]![0] === field && following[n]![1] === -order));
    const bounded = fields.has(keys[0]![0]);
    if (!bounded && !(sort.length > 0 && sortServed)) {
      tried.push(`${index.name}: its first key ${keys[0]![0]} is not in the filter`);
      continue;
    }
    if (sort.length > 0 && !sortServed) {
      tried.push(`${index.name}: does not give the order ${JSON.stringify(selection.sort)}`);
      continue;
    }
    if (selection.command === 'count') {
      const missing = [...fields.keys()].filter((field) => !(field in index.key));
      if (missing.length > 0) {
        tried.push(`${index.name}: counting reads documents for ${missing.join(', ')}`);
        continue;
      }
    }
    return { served: true, index: index.name };
  }
  return { served: false, why: tried.join('; ') };
}
