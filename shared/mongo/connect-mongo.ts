import { MongoClient, type Db } from 'mongodb';

export interface MongoConnection {
  client: MongoClient;
  db: Db;
}

/**
 * Connects with short server-selection timeouts: when MongoDB is down an API request fails with
 * 503 in about a second instead of hanging for the driver's default 30 s.
 */
export async function connectMongo(
  uri: string,
  dbName: string,
  options: { appName: string; serverSelectionTimeoutMS?: number },
): Promise<MongoConnection> {
  const client = new MongoClient(uri, {
    appName: options.appName,
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 2_000,
    connectTimeoutMS: 2_000,
  });
  await client.connect();
  return { client, db: client.db(dbName) };
}

export async function pingMongo(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}
