/**
 * SPOOL_DIR cannot be used at start-up: the receiver stops with one line naming the variable, the
 * folder, what it could not do and why, instead of a stack trace and a restart loop.
 */
export class SpoolDirError extends Error {
  override name = 'SpoolDirError';
  readonly code = 'SPOOL_DIR_UNUSABLE';
  readonly dir: string;
  /** The system's error code (EACCES, EEXIST, ...), or the message of an error without one. */
  readonly reason: string;

  constructor(dir: string, action: string, cause: unknown) {
    const reason = (cause as NodeJS.ErrnoException).code ?? (cause as Error).message;
    const hint = hints[reason];
    super(`SPOOL_DIR ${JSON.stringify(dir)}: cannot ${action}: ${reason}${hint ? ` (${hint})` : ''}`, {
      cause,
    });
    this.dir = dir;
    this.reason = reason;
  }
}

const hints: Readonly<Record<string, string>> = {
  EACCES: "the receiver's user may not write there",
  EPERM: "the receiver's user may not do that there",
  EEXIST: 'a file is in the way of the folder',
  ENOTDIR: 'a file is in the way of the folder',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  ENAMETOOLONG: 'its socket path would be too long; use a SPOOL_DIR of at most about 80 characters',
};

/** Runs one start-up step of the spool on `dir`; a failure becomes a SpoolDirError naming it. */
export async function spoolDirStep<T>(dir: string, action: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw new SpoolDirError(dir, action, error);
  }
}
