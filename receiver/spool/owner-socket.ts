import { lstat } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { relative } from 'node:path';

/**
 * Which receiver process owns an instance folder of the spool: the one listening on the folder's
 * Unix socket. The kernel answers for it: a connection is accepted while that process lives and
 * refused once it has died, however it died (SIGKILL, a crash, the machine's power). Unlike a PID in
 * a lock file it cannot be fooled by a PID reused since, nor by containers in which every receiver
 * is PID 1. It answers for the processes of one machine: a SPOOL_DIR shared between machines (NFS)
 * is not supported.
 */
export interface OwnerSocket {
  /** Listens again if the socket's file was removed (with the whole SPOOL_DIR, say). */
  ensure(): Promise<void>;
  /** Stops listening and removes the socket's file. */
  release(): Promise<void>;
}

/** Listens on `path` for as long as this process owns the folder the socket stands for. */
export async function holdOwnerSocket(path: string): Promise<OwnerSocket> {
  let server = await listenOn(path);
  let released = false;
  /** One check at a time: two listening again at once would meet EADDRINUSE. */
  let ensuring: Promise<void> | undefined;
  const listenAgainIfGone = async () => {
    const gone = await lstat(path).then(
      () => false,
      (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
    );
    if (!gone || released) return;
    await close(server);
    server = await listenOn(path);
  };
  return {
    ensure() {
      ensuring ??= listenAgainIfGone().finally(() => {
        ensuring = undefined;
      });
      return ensuring;
    },
    async release() {
      // A check under way finishes first, so none listens again after this.
      released = true;
      await ensuring?.catch(() => undefined);
      await close(server);
    },
  };
}

/**
 * What answers at the owner socket `path`: `refused`, a process that died (its file stays, nobody
 * listens); `gone`, no file (removed when its process stopped, or by hand or a cleaner while it
 * runs); `alive` otherwise. Anything else (a full backlog, another user's socket) counts as alive:
 * taking a live receiver's folder would lose its events, while leaving a dead one's only delays
 * them.
 */
export function ownerStatus(path: string): Promise<'alive' | 'refused' | 'gone'> {
  return new Promise((resolve) => {
    const socket = connect(socketAddress(path));
    const settle = (status: 'alive' | 'refused' | 'gone') => {
      socket.destroy();
      resolve(status);
    };
    socket.setTimeout(2_000, () => settle('alive'));
    socket.once('connect', () => settle('alive'));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      settle(error.code === 'ECONNREFUSED' ? 'refused' : error.code === 'ENOENT' ? 'gone' : 'alive'),
    );
  });
}

/** Whether a live process owns the socket at `path` (ownerStatus): refused or gone means dead. */
export const ownerIsAlive = async (path: string): Promise<boolean> => (await ownerStatus(path)) === 'alive';

async function listenOn(path: string): Promise<Server> {
  // A connection only asks whether this process lives: it is closed at once.
  const server = createServer((connection) => connection.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketAddress(path), () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  // It must not keep the process alive by itself.
  server.unref();
  return server;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Linux's limit of a socket's path (108 bytes of sun_path, with the terminating zero). */
const maxSocketPath = 107;

/** `path`, or the same path relative to the working directory when only that one fits the limit. */
function socketAddress(path: string): string {
  if (Buffer.byteLength(path) <= maxSocketPath) return path;
  const nearer = relative(process.cwd(), path);
  if (Buffer.byteLength(nearer) <= maxSocketPath) return nearer;
  throw Object.assign(
    new Error(`its socket's path is longer than ${maxSocketPath} bytes; choose a shorter path`),
    { code: 'ENAMETOOLONG' },
  );
}
