import type { z } from 'zod';

/**
 * The issue an input's 400 names: an unknown member first, else the first issue. zod reports the
 * required members an object lacks before its unknown ones, and a misspelt `targetID` is better
 * named as sent than as the `targetId` it stands for, missing.
 */
export const firstIssue = (error: z.ZodError) =>
  error.issues.find((issue) => issue.code === 'unrecognized_keys') ?? error.issues[0];
