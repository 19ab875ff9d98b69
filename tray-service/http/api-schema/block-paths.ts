import type { ZodOpenApiPathsObject, ZodOpenApiResponseObject } from 'zod-openapi';
import {
  blockListBody,
  blockListPage,
  blockMemberBody,
  blockStatusBody,
  checkListBody,
  unblockMemberBody,
  checkListQuery,
} from './block-schemas.ts';
import { errorResponse, header, jsonContent, jsonResponse } from './error-responses.ts';
import { trayBodyErrors, USER_DELETED_DESCRIPTION } from './tray-errors.ts';
import { MAX_BLOCKED_USERS } from '../../domain/block-list-limit.ts';

/** Deprecation and Sunset: on every block-list answer, errors included. */
const blockHeaders = {
  Deprecation: header('RFC 9745: the block list is deprecated'),
  Sunset: header('RFC 8594: Wed, 28 Feb 2024 00:00:00 GMT'),
};

type Responses = Record<number, ZodOpenApiResponseObject>;

const withBlockHeaders = (responses: Responses): Responses =>
  Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      { ...response, headers: { ...blockHeaders, ...(response.headers as object | undefined) } },
    ]),
  );

const OFF = 'BLOCK_API=off: the beta is gone (code 410000)';

/**
 * `gone` describes the call's 410s: BLOCK_API=off, and for a write also a deleted user's;
 * `own` the answers the call has besides the tray calls' (its own 400).
 */
const responses = (
  description: string,
  schema: Parameters<typeof jsonContent>[0],
  gone = OFF,
  own: Responses = {},
) =>
  withBlockHeaders({
    200: jsonResponse(schema, description),
    ...trayBodyErrors,
    410: errorResponse(gone),
    ...own,
  });

const memberBody = { required: true, content: jsonContent(blockMemberBody) };
const unblockBody = { required: true, content: jsonContent(unblockMemberBody) };

/** The legacy block list (docs/contract.md#block-list-legacy-beta-deprecated), a deprecated beta. */
export const blockPaths: ZodOpenApiPathsObject = {
  '/block/members': {
    post: {
      summary: 'Block one user (idempotent)',
      deprecated: true,
      requestBody: memberBody,
      responses: responses('Blocked', blockStatusBody, `${OFF}; or ${USER_DELETED_DESCRIPTION}`, {
        400: errorResponse(
          `A field failed validation or a field the call does not take was sent (code 400001, the message names it; blocking yourself too), the body is malformed, or the caller already blocks ${MAX_BLOCKED_USERS.toLocaleString('en-US')} users and this one is not among them (code 400005); nothing changed`,
        ),
      }),
    },
    delete: {
      summary: 'Unblock one user (idempotent)',
      deprecated: true,
      requestBody: unblockBody,
      responses: responses('Not blocked', blockStatusBody),
    },
    get: {
      summary: 'Which of the given users the caller has blocked',
      deprecated: true,
      requestParams: { query: checkListQuery },
      responses: responses('OK', checkListBody),
    },
  },
  '/block': {
    post: {
      summary: "The caller's block list, 20 per page",
      deprecated: true,
      requestBody: { required: false, content: jsonContent(blockListBody) },
      responses: responses('OK', blockListPage),
    },
  },
};
