import type pg from 'pg';

/** What tray_records takes on disk, per record: the table itself, and each of its indexes. */
export interface RecordFootprint {
  records: number;
  /** pg_total_relation_size: heap, TOAST, free space and visibility maps, and every index. */
  totalBytes: number;
  /** The table without its indexes (heap, TOAST, maps). */
  tableBytes: number;
  indexes: { name: string; bytes: number }[];
}

export async function recordFootprint(sql: Pick<pg.Pool, 'query'>): Promise<RecordFootprint> {
  const sizes = await sql.query<{ records: string; total: string; table: string }>(
    `SELECT (SELECT count(*) FROM tray_records) AS records,
       pg_total_relation_size('tray_records') AS total, pg_table_size('tray_records') AS table`,
  );
  const indexes = await sql.query<{ name: string; bytes: string }>(
    `SELECT indexrelid::regclass::text AS name, pg_relation_size(indexrelid) AS bytes
     FROM pg_index WHERE indrelid = 'tray_records'::regclass ORDER BY 2 DESC, 1`,
  );
  const row = sizes.rows[0];
  return {
    records: Number(row?.records ?? 0),
    totalBytes: Number(row?.total ?? 0),
    tableBytes: Number(row?.table ?? 0),
    indexes: indexes.rows.map(({ name, bytes }) => ({ name, bytes: Number(bytes) })),
  };
}

/** One line: bytes a record takes with its indexes, then the table's and each index's share. */
export function describeFootprint(footprint: RecordFootprint): string {
  const per = (bytes: number) => Math.round(bytes / Math.max(1, footprint.records));
  const gb = (footprint.totalBytes / 1024 ** 3).toFixed(2);
  return (
    `on disk: ${footprint.records.toLocaleString('en-US')} records take ${gb} GB with their indexes, ` +
    `${per(footprint.totalBytes)} bytes a record (pg_total_relation_size / rows): table ${per(footprint.tableBytes)}, ` +
    footprint.indexes.map((index) => `${index.name} ${per(index.bytes)}`).join(', ')
  );
}
