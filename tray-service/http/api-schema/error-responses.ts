import { z } from 'zod';
import type { oas31, ZodOpenApiResponseObject } from 'zod-openapi';

/** Every error's body (docs/contract.md#errors): one shape whatever the status. */
export const errorBody = z
  .strictObject({
    status: z.literal('error'),
    code: z
      .number()
      .int()
      .meta({ examples: [400001, 400002, 401000, 400311] }),
    message: z.string(),
  })
  .meta({ description: 'Every error: a stable numeric code and a message naming the problem' });

export type ErrorBody = z.infer<typeof errorBody>;

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
