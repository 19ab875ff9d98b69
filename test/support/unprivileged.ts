import { chmodSync, chownSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** `command args` as the unprivileged user: the command and arguments to spawn. */
export function unprivileged(command: string, args: readonly string[]): { command: string; args: string[] } {
  if (!isRoot) return { command, args: [...args] };
  const ids = unprivilegedIds;
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
