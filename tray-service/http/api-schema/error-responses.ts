import { z } from 'zod';
import type { oas31, ZodOpenApiResponseObject } from 'zod-openapi';
import { errorCodes } from '../../../shared/errors/app-error.ts';

/** Every error's body (docs/contract.md#errors): one shape whatever the status. */
export const errorBody = z
  .strictObject({
    status: z.literal('error'),
    code: z
      .number()
      .int()
      .meta({ examples: [400001, 400002, 401000, 401001, 400311] }),
    message: z.string(),
  })
  .meta({ description: 'Every error: a stable numeric code and a message naming the problem' });

export type ErrorBody = z.infer<typeof errorBody>;

/**
 * The two codes of a tray call's 401, which a client must tell apart (docs/client.md#tokens-errors-and-retries):
 * another token may help with the first and never with the second.
 */
export const unauthorizedCodes = {
  invalidToken: errorCodes.UNAUTHORIZED.code,
  banned: errorCodes.BANNED.code,
} as const;

/** A tray call's 401: the shared error shape, its code one of unauthorizedCodes. */
export const unauthorizedBody = errorBody
  .extend({
    code: z.union([
      z.literal(unauthorizedCodes.invalidToken).meta({
        description: 'Missing, expired or invalid bearer token or stream ticket: ask for a new token',
      }),
      z.literal(unauthorizedCodes.banned).meta({
        description: 'The user is globally banned: every token of theirs is refused until the ban is lifted',
      }),
    ]),
  })
  .meta({ description: 'Not authenticated: code 401000 for the token, 401001 for a globally banned user' });

/** A tray call's 401 answer: the token's code or the ban's; `description` says when each comes. */
export const unauthorizedResponse = (description: string): ZodOpenApiResponseObject => ({
  description,
  content: { 'application/json': { schema: unauthorizedBody } },
});

/** A header a response carries, by name. */
export type Headers = Record<string, oas31.HeaderObject>;

/** An error answer: the shared body, with what this status means here. */
export const errorResponse = (description: string, headers?: Headers): ZodOpenApiResponseObject => ({
  description,
  content: { 'application/json': { schema: errorBody } },
  ...(headers ? { headers } : {}),
});

/** A header holding text (the documented schema of every header the service sets). */
export const header = (description: string, type: 'string' | 'integer' = 'string'): oas31.HeaderObject => ({
  description,
  schema: { type },
});

/** A JSON body declared by its zod schema. */
export const jsonContent = (schema: z.ZodType) => ({ 'application/json': { schema } });

/** A success answer with a JSON body. */
export const jsonResponse = (schema: z.ZodType, description = 'OK'): ZodOpenApiResponseObject => ({
  description,
  content: jsonContent(schema),
});
