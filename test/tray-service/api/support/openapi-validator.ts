import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { createOpenApiDocument } from '../../../../tray-service/http/openapi.ts';
import { adminOpenApi } from '../../../../tray-service/admin/admin-openapi.ts';

/** The document as served with the admin API mounted (default page limits, as in admin-fixtures.ts). */
export const openApiDocument = createOpenApiDocument(adminOpenApi({ defaultLimit: 50, maxLimit: 500 }));

const DOC_ID = 'https://tray.local/openapi.json';
// strict: false because the document carries OpenAPI keywords (paths, info, ...) next to schemas.
const ajv = new Ajv2020({ strict: false, allErrors: true });
// The admin views' times: what Date#toISOString writes (the only producer), e.g. 2026-11-20T10:00:00.000Z.
ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
ajv.addSchema({ ...structuredClone(openApiDocument), $id: DOC_ID } as object);

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

type MediaTypes = Record<string, { schema: unknown; 'x-itemSchema'?: unknown }>;

function expectValid(value: unknown, ref: string, what: string): void {
  const validate = ajv.compile({ $ref: ref });
  const valid = validate(value);
  expect(valid, `${what}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`).to.equal(true);
}

/**
 * Fails unless the response's status and content type are documented for this operation and its
 * body matches the schema. An NDJSON body (the admin export) is checked line by line against the
 * media type's x-itemSchema, which schemathesis cannot do.
 */
export function expectMatchesOpenApi(res: Response, method: string, path: string): void {
  const paths = openApiDocument.paths as Record<
    string,
    Record<string, { responses: Record<string, { content?: MediaTypes }> }>
  >;
  const operation = paths[path]?.[method.toLowerCase()];
  expect(operation, `${method} ${path} is not in the OpenAPI document`).to.not.equal(undefined);
  const response = operation!.responses[String(res.status)];
  expect(response, `${method} ${path} does not document status ${res.status}`).to.not.equal(undefined);
  const what = `${method} ${path} ${res.status}`;
  expect(response!.content, `${what}: the document gives no content type`).to.have.property(res.type);
  const mediaPointer = pointer(
    'paths',
    path,
    method.toLowerCase(),
    'responses',
    String(res.status),
    'content',
  );
  if (res.type === 'application/x-ndjson') {
    const lines = res.text.split('\n');
    expect(lines.pop(), `${what}: the last line is not complete`).to.equal('');
    const itemRef = `${DOC_ID}#/${mediaPointer}/${pointer(res.type, 'x-itemSchema')}`;
    lines.forEach((line, n) => expectValid(JSON.parse(line), itemRef, `${what} line ${n + 1}`));
    return;
  }
  // supertest parses JSON bodies only; a text body (Prometheus metrics) is checked as its text.
  const body: unknown = res.type.startsWith('text/') ? res.text : res.body;
  expectValid(body, `${DOC_ID}#/${mediaPointer}/${pointer(res.type, 'schema')}`, what);
}
