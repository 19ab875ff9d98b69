import { expect } from 'chai';
import { Writable } from 'node:stream';
import { MongoClient, MongoNotConnectedError } from 'mongodb';
import { pino } from 'pino';
import { connectMongo, type MongoConnection } from '../../../shared/mongo/connect-mongo.ts';
import { testStack } from '../../support/test-stack.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface MonitorInternals {
  connection: { socket: { destroy(): void } } | null;
  requestCheck(): void;
}

/**
 * Puts the client's server monitor into the state the driver (7.9) cannot leave: a check starts
 * on a monitoring connection whose socket is destroyed but has not emitted 'close' yet, and waits
 * for a 'drain' that never comes. Under load this happens when the database restarts; here it is
 * forced through the driver's internals, which only this test touches.
 */
async function jamMonitor(client: MongoClient): Promise<void> {
  const topology = (
    client as unknown as { topology: { s: { servers: Map<string, { monitor: MonitorInternals }> } } }
  ).topology;
  const [server] = [...topology.s.servers.values()];
  if (!server?.monitor.connection) throw new Error('no monitoring connection to jam');
  // A check requested sooner than 500 ms after the last one would be deferred past the window.
  await sleep(700);
  server.monitor.connection.socket.destroy();
  server.monitor.requestCheck();
}

function heartbeats(client: MongoClient) {
  const seen: string[] = [];
  for (const name of [
    'serverHeartbeatStarted',
    'serverHeartbeatSucceeded',
    'serverHeartbeatFailed',
  ] as const) {
    client.on(name, () => seen.push(name));
  }
  return seen;
}

function memoryLogger() {
  const lines: { msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { msg: string });
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), messages: () => lines.map((line) => line.msg) };
}

describe('connectMongo: a stuck server monitor', function () {
  this.timeout(30_000);
  let connection: MongoConnection | undefined;
  afterEach(async () => {
    await connection?.close();
    connection = undefined;
  });

  it('without the watch, the jammed monitor never checks the server again (the driver fault itself)', async () => {
    const client = new MongoClient(testStack().mongoUri, {
      heartbeatFrequencyMS: 1_000,
      connectTimeoutMS: 2_000,
    });
    await client.connect();
    try {
      const seen = heartbeats(client);
      await jamMonitor(client);
      await sleep(5_000);
      // One check started and nothing after it, although one is due every second.
      expect(seen).to.deep.equal(['serverHeartbeatStarted']);
    } finally {
      await client.close();
    }
  });

  it('reconnects the client once a heartbeat has run past the limit; heartbeats and the same db handle work again', async () => {
    const { logger, messages } = memoryLogger();
    connection = await connectMongo(testStack().mongoUri, 'watch_heartbeats', {
      appName: 'test',
      logger,
      stuckHeartbeatMs: 1_000,
    });
    const seen = heartbeats(connection.client);
    await jamMonitor(connection.client);
    const deadline = Date.now() + 10_000;
    while (!messages().includes('MongoDB client reconnected') && Date.now() < deadline) await sleep(100);
    expect(messages()).to.include.members([
      'MongoDB server monitor stuck; reconnecting the client',
      'MongoDB client reconnected',
    ]);
    expect(seen).to.include('serverHeartbeatSucceeded');
    expect(await connection.db.command({ ping: 1 })).to.deep.include({ ok: 1 });
  });

  it('does not reopen a client that was closed on purpose', async () => {
    const { logger, messages } = memoryLogger();
    const closed = await connectMongo(testStack().mongoUri, 'watch_heartbeats', {
      appName: 'test',
      logger,
      stuckHeartbeatMs: 500,
    });
    await jamMonitor(closed.client);
    await closed.client.close();
    await sleep(2_000);
    expect(messages()).to.deep.equal([]);
    let error: unknown;
    try {
      await closed.db.command({ ping: 1 });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(MongoNotConnectedError);
  });
});
