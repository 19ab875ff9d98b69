import { expect } from 'chai';
import { SignJWT } from 'jose';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import { repoRoot } from '../../support/run-script.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { aTrayRecord, insertRecords } from '../../tray-service/api/support/tray-record-builder.ts';
import { reportFigures } from '../support/report-figures.ts';
import { startTrayProcess, trayJwtSecret, type TrayProcess } from '../support/tray-process.ts';

/** Installed by `npm run setup:schemathesis` (scripts/setup-schemathesis.sh), or SCHEMATHESIS_BIN. */
const schemathesis = process.env.SCHEMATHESIS_BIN ?? join(repoRoot, '.tools/schemathesis/bin/st');
const examples = Number(process.env.SCHEMATHESIS_EXAMPLES ?? 100);
const user = 'schemathesis-user';

function run(
  command: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // Hypothesis keeps its example database in the working directory: a temporary one, not the repo.
    const cwd = mkdtempSync(join(tmpdir(), 'schemathesis-'));
    const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, output });
    });
  });
}

describe('tray API against its own OpenAPI document (schemathesis)', function () {
  this.timeout(600_000);
  let tray: TrayProcess | undefined;
  const dbName = uniqueName('schemathesis');
  after(async () => {
    await tray?.kill();
    const { client, db } = await connectMongo(testStack().mongoUri, dbName, { appName: 'reliability' });
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  });

  it(`answers no 5xx and matches the document in status, content type, headers and body (${examples} examples per operation)`, async () => {
    expect(existsSync(schemathesis), `${schemathesis} is missing: run npm run setup:schemathesis`).to.equal(
      true,
    );
    const { client, db } = await connectMongo(testStack().mongoUri, dbName, { appName: 'reliability' });
    try {
      // Records to page through, so the history schemas are checked on real items, not empty lists.
      await insertRecords(
        db,
        Array.from({ length: 25 }, (_, n) =>
          aTrayRecord({
            userId: user,
            targetId: `st-${n}`,
            verb: n % 2 ? 'comment' : 'post',
            lastUpdate: Date.now() - n * 1000,
          }),
        ),
      );
    } finally {
      await client.close();
    }
    tray = await startTrayProcess({
      redisUrl: testStack().redisUrl,
      mongoUri: testStack().mongoUri,
      db: dbName,
      prefix: useQueuePrefix(),
      // The fuzzer is one client sending thousands of calls: the per-user limit would answer 429.
      env: { RATE_LIMIT_CALLS: '1000000' },
    });
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user)
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(trayJwtSecret));
    const base = `http://127.0.0.1:${tray.port}`;
    const { code, output } = await run(
      schemathesis,
      [
        'run',
        `${base}/openapi.json`,
        '--experimental=openapi-3.1',
        '--base-url',
        base,
        '-H',
        `Authorization: Bearer ${token}`,
        '--checks',
        'not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance',
        '--hypothesis-max-examples',
        String(examples),
        '--hypothesis-seed',
        process.env.SCHEMATHESIS_SEED ?? '1',
        '--no-color',
      ],
      540_000,
    );
    const checks = [...output.matchAll(/^\s+(\w+)\s+(\d+) \/ (\d+) passed/gm)].map((m) => ({
      check: m[1],
      passed: Number(m[2]),
      total: Number(m[3]),
    }));
    reportFigures('api schemathesis', {
      examplesPerOperation: examples,
      operations: Number(/Collected API operations: (\d+)/.exec(output)?.[1] ?? 0),
      checks,
      summary: /=+ (.* in [\d.]+s) =+/.exec(output)?.[1],
    });
    expect(code, output).to.equal(0);
    expect(checks.length, output).to.equal(5);
  });
});
