import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { openApiDocument } from '../../../../tray-service/api/openapi.ts';

const DOC_ID = 'https://tray.local/openapi.json';
// strict: false because the document carries OpenAPI keywords (paths, info, ...) next to schemas.
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ ...structuredClone(openApiDocument), $id: DOC_ID } as object);

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Fails unless the response's status is documented for this operation and its body matches the schema. */
export function expectMatchesOpenApi(res: Response, method: string, path: string): void {
  const paths = openApiDocument.paths as Record<
    string,
    Record<string, { responses: Record<string, unknown> }>
  >;
  const operation = paths[path]?.[method.toLowerCase()];
  expect(operation, `${method} ${path} is not in the OpenAPI document`).to.not.equal(undefined);
  expect(operation!.responses, `${method} ${path} does not document status ${res.status}`).to.have.property(
    String(res.status),
  );
  const ref = `${DOC_ID}#/${pointer('paths', path, method.toLowerCase(), 'responses', String(res.status), 'content', 'application/json', 'schema')}`;
  const validate = ajv.compile({ $ref: ref });
  const valid = validate(res.body);
  expect(
    valid,
    `${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body)}`,
  ).to.equal(true);
}
