import type { PageKey } from '../../../domain/page-cursor.ts';

/** MongoDB condition "strictly after `key`" in (field desc, _id desc) order: keyset paging. */
export function afterKeyQuery(field: string, key: PageKey): Record<string, unknown> {
  return {
    $or: [{ [field]: { $lt: key.at } }, { [field]: key.at, _id: { $lt: key.id } }],
  };
}
