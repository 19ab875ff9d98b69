import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './run-script.ts';

/**
 * Root is not bound by file modes: a read-only folder, or one it does not own, stops nothing it
 * does. A test of what a mode refuses runs its subject as an unprivileged user instead: under root
 * as nobody (65534, through util-linux's setpriv), as any other user as that user, whom the modes
 * already bind. The repository and its node_modules are world-readable, so that user can run them.
 */
const isRoot = process.getuid?.() === 0;

/** The uid and gid the command of `unprivileged` runs as. */
export const unprivilegedIds = isRoot
  ? { uid: 65534, gid: 65534 }
  : { uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1 };

let reachable = false;
/**
 * Under root, whether nobody can reach Node and the repository at all: a checkout in /root (mode
 * 0700) or made under umask 077 failed these tests with permission errors naming no cause.
 */
function assertReachable(ids: { uid: number; gid: number }): void {
  if (reachable) return;
  const drop = [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups'];
  const repository = join(repoRoot, 'package.json');
  try {
    execFileSync('setpriv', [...drop, 'test', '-x', process.execPath, '-a', '-r', repository]);
  } catch {
    throw new Error(
      `some tests run their subject as nobody (uid ${ids.uid}), who cannot reach ${process.execPath} or ` +
        `${repository}: clone the repository where every user may pass (not under /root), or let them ` +
        `(chmod o+x each folder above it, and o+rX within it)`,
    );
  }
  reachable = true;
}

/** `command args` as the unprivileged user: the command and arguments to spawn. */
export function unprivileged(command: string, args: readonly string[]): { command: string; args: string[] } {
  if (!isRoot) return { command, args: [...args] };
  const ids = unprivilegedIds;
  assertReachable(ids);
  return {
    command: 'setpriv',
    args: [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', command, ...args],
  };
}

/**
 * A new folder `name` under `parent` that the unprivileged user owns (mode 0700), and `parent`
 * opened for it to pass through (a mkdtemp folder is 0700).
 */
export function unprivilegedFolder(parent: string, name: string): string {
  const path = join(parent, name);
  mkdirSync(path, { mode: 0o700 });
  if (isRoot) {
    chmodSync(parent, 0o711);
    chownSync(path, unprivilegedIds.uid, unprivilegedIds.gid);
  }
  return path;
}

/**
 * A folder the unprivileged user may write in but does not own, as a Kubernetes emptyDir (0777,
 * root's) or a volume shared through fsGroup gives it. As root: a new 0777 folder under `parent`.
 * As another user, who cannot give a folder away: the system's temporary folder (root's, 1777).
 */
export function foreignWritableFolder(parent: string, name: string): string {
  if (!isRoot) return tmpdir();
  const path = join(parent, name);
  mkdirSync(path);
  chmodSync(path, 0o777);
  chmodSync(parent, 0o711);
  return path;
}
