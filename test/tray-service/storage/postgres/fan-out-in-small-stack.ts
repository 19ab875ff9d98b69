// Run by postgres-writes.test.ts as `node --stack-size=150 fan-out-in-small-stack.ts URL SIZE`:
// fans one post out to a community of SIZE members in a database already migrated, and prints
// what it found as one JSON line. A small stack lets a spread of SIZE arguments overflow it (a
// RangeError) with a community a tenth of the size the default stack needs, so the case that a
// spread into push broke is tried in seconds.
import pg from 'pg';
import { createPostgresMembersImport } from '../../../../tray-service/storage/postgres/postgres-members-import.ts';
import { createPostgresWrites } from '../../../../tray-service/storage/postgres/postgres-writes.ts';
import { at, NOW, post, RETENTION_DAYS } from './tray-fixture.ts';

const [url = '', sizeText = ''] = process.argv.slice(2);
const size = Number(sizeText);
const pool = new pg.Pool({ connectionString: url, max: 2 });
try {
  // Proof that the stack is small enough: a spread of SIZE arguments overflows it.
  let spreadOverflows = false;
  try {
    const spread: number[] = [];
    spread.push(...new Array<number>(size).fill(0));
  } catch (error) {
    spreadOverflows = error instanceof RangeError;
  }
  const members = createPostgresMembersImport(pool);
  for (let start = 0; start < size; start += 10_000)
    await members.importBatch(
      Array.from({ length: Math.min(10_000, size - start) }, (_, offset) => ({
        communityId: 'c-vast',
        userId: `v${start + offset}`,
        since: at(0),
      })),
      at(0),
    );
  let told = 0;
  await createPostgresWrites(pool).fanOutPosts('c-vast', [post('c-vast', 'v0', 1)], {
    now: NOW,
    retentionDays: RETENTION_DAYS,
    onWritten: async (records) => {
      told += records.length;
    },
  });
  process.stdout.write(`${JSON.stringify({ spreadOverflows, told })}\n`);
} finally {
  await pool.end();
}
