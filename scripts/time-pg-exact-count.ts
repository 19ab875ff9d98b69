// `node scripts/time-pg-exact-count.ts [--comments 5000] [--writes 60]`: a quick timing, by hand, of
// one comment written to a record the PostgreSQL adapter counts exactly (its recipient was away
// once since the record began: docs/tray-rules.md#leaving-and-rejoining-a-community), beside the
// same write to a twin record whose recipient never left (the group's summary, no exact count) as
// the baseline of the same run. Three groups each: --comments comments by as many actors, the same
// number by one actor (whose older ones the kept copies pruned, so the exact count also reads the
// group's), and 20 by three actors. Prints p50 and p90 of --writes single-comment writes per
// group. Uses DATABASE_URL's server when set (in a database of its own), else a throwaway cluster.
import { parseArgs } from 'node:util';
import type { Activity } from '../tray-service/domain/activity.ts';
import { migrate } from '../tray-service/storage/postgres/migrate.ts';
import { createPostgresWrites } from '../tray-service/storage/postgres/postgres-writes.ts';
import { quantile } from './lib/quantile.ts';
import { openScratchPostgres } from './lib/scratch-postgres.ts';

const { values: args } = parseArgs({
  options: {
    comments: { type: 'string', default: '5000' },
    writes: { type: 'string', default: '60' },
  },
});
const comments = Number(args.comments);
const writes = Number(args.writes);
const T = Date.UTC(2026, 0, 1);
const context = (now: number) => ({ now, retentionDays: 36_500 });

let seq = 0;
/** A comment by `actor` on `owner`'s post `post` in community c, one ms after the last. */
function comment(actor: string, owner: string, post: string): Activity {
  seq += 1;
  const feed = { kind: 'community' as const, id: 'c', name: 'Club' };
  return {
    verb: 'comment',
    targetType: 'post',
    targetId: post,
    targetName: feed.name,
    parentTargetId: feed.id,
    lastActionId: `cm-${seq}`,
    feed,
    communityId: 'c',
    actor: { userId: actor, name: actor },
    at: T + seq,
    audience: { kind: 'user', userId: owner },
  };
}

async function main(): Promise<void> {
  const { pool, close } = await openScratchPostgres('exact');
  try {
    await migrate(pool);
    const tray = createPostgresWrites(pool);
    // ana left and came back after every comment below: each of her records counts exactly.
    await tray.applyMemberships(
      [
        { communityId: 'c', userId: 'ana', active: true, at: T - 2 },
        { communityId: 'c', userId: 'bo', active: true, at: T - 2 },
        { communityId: 'c', userId: 'ana', active: false, at: T + 100_000_000 },
        { communityId: 'c', userId: 'ana', active: true, at: T + 100_000_001 },
      ],
      context(T),
    );
    const groups = [
      { name: `${comments} comments by as many actors`, size: comments, actor: (i: number) => `a-${i}` },
      { name: `${comments} comments by one actor`, size: comments, actor: () => 'ben' },
      { name: '20 comments by three actors', size: 20, actor: (i: number) => `s-${i % 3}` },
    ];
    for (const [g, group] of groups.entries()) {
      for (const owner of ['ana', 'bo']) {
        process.stdout.write(`filling ${owner}'s post ${g}: ${group.name}\n`);
        // In statements of 500, as deliveries batch them.
        for (let i = 0; i < group.size; i += 500) {
          const batch = Array.from({ length: Math.min(500, group.size - i) }, (_, j) =>
            comment(group.actor(i + j), owner, `p-${owner}-${g}`),
          );
          await tray.applyPersonal(batch, context(T + seq));
        }
      }
    }
    for (const [g, group] of groups.entries()) {
      const timings: Record<string, string> = {};
      for (const owner of ['ana', 'bo']) {
        const ms: number[] = [];
        for (let i = 0; i < writes; i++) {
          const one = comment(`new-${g}-${i}`, owner, `p-${owner}-${g}`);
          const started = performance.now();
          await tray.applyPersonal([one], context(T + seq));
          ms.push(performance.now() - started);
        }
        ms.sort((a, b) => a - b);
        timings[owner] = `p50 ${quantile(ms, 0.5).toFixed(2)} ms, p90 ${quantile(ms, 0.9).toFixed(2)} ms`;
      }
      process.stdout.write(
        `${group.name}: counted exactly ${timings.ana}; baseline (group summary) ${timings.bo}\n`,
      );
    }
  } finally {
    await close();
  }
}

await main();
