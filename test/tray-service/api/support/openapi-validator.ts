import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { createAdminOpenApiDocument } from '../../../../tray-service/admin/api-schema/admin-api-schema.ts';
import { createTrayOpenApiDocument } from '../../../../tray-service/http/api-schema/tray-api-schema.ts';

/** An answer as supertest gives it, or as test code builds it from a fetch Response. */
export interface Answer {
  status: number;
  /** The content type without its parameters. */
  type: string;
  /** The parsed JSON body (supertest parses JSON only). */
  body: unknown;
  text: string;
  /** The answer's headers, names in lower case (supertest's `headers`); checked when given. */
  headers?: Record<string, unknown>;
}

type MediaTypes = Record<string, { schema: unknown; 'x-itemSchema'?: unknown }>;
type Response = { content?: MediaTypes; headers?: Record<string, unknown> };
type Paths = Record<string, Record<string, { responses: Record<string, Response> }>>;

/**
 * The headers the service sets for a caller to act on: each one an answer carries must be
 * documented on that operation's response. (Headers every answer of a kind carries, such as helmet's,
 * CORS and caching, are described once in docs/tray-api.md.)
 */
const ACTIONABLE_HEADERS = [
  'allow',
  'deprecation',
  'etag',
  'retry-after',
  'sunset',
  'www-authenticate',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-request-id',
];

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/**
 * Checks answers against a generated OpenAPI document: fails unless the status and content type
 * are documented for the operation and the body matches the schema. An NDJSON body (the admin
 * export) is checked line by line against the media type's x-itemSchema, which schemathesis cannot
 * do. `matched` lists every `METHOD path status` it has accepted.
 */
export function createOpenApiValidator(document: object) {
  const id = `https://tray.local/openapi-${Math.random().toString(36).slice(2)}.json`;
  // strict: false because the document carries OpenAPI keywords (paths, info, ...) next to schemas.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // The admin views' times: what Date#toISOString writes (the only producer), e.g. 2026-11-20T10:00:00.000Z.
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  ajv.addSchema({ ...structuredClone(document), $id: id });
  const matched = new Set<string>();

  const expectValid = (value: unknown, ref: string, what: string) => {
    const validate = ajv.compile({ $ref: ref });
    const valid = validate(value);
    expect(valid, `${what}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`).to.equal(true);
  };

  return {
    matched,
    /** Fails unless `value` matches the schema at `ref` (a pointer into the document: #/components/...). */
    expectValid: (value: unknown, ref: string, what: string) => expectValid(value, `${id}${ref}`, what),
    expectMatches(res: Answer, method: string, path: string): void {
      const operation = (document as { paths: Paths }).paths[path]?.[method.toLowerCase()];
      expect(operation, `${method} ${path} is not in the OpenAPI document`).to.not.equal(undefined);
      const response = operation!.responses[String(res.status)];
      expect(response, `${method} ${path} does not document status ${res.status}`).to.not.equal(undefined);
      const what = `${method} ${path} ${res.status}`;
      const documented = new Set(Object.keys(response!.headers ?? {}).map((name) => name.toLowerCase()));
      for (const name of ACTIONABLE_HEADERS.filter((one) => res.headers?.[one] !== undefined))
        expect(documented.has(name), `${what}: header ${name} is sent but not documented`).to.equal(true);
      if (response!.content === undefined) {
        // An answer without a body (304).
        expect(res.text ?? '', `${what}: the document gives no body`).to.equal('');
        matched.add(`${method.toUpperCase()} ${path} ${res.status}`);
        return;
      }
      expect(response!.content, `${what}: the document gives no content type`).to.have.property(res.type);
      const media = pointer('paths', path, method.toLowerCase(), 'responses', String(res.status), 'content');
      if (res.type === 'application/x-ndjson') {
        const lines = res.text.split('\n');
        expect(lines.pop(), `${what}: the last line is not complete`).to.equal('');
        const itemRef = `${id}#/${media}/${pointer(res.type, 'x-itemSchema')}`;
        lines.forEach((line, n) => expectValid(JSON.parse(line), itemRef, `${what} line ${n + 1}`));
      } else {
        // A text body (Prometheus metrics, an event stream) is checked as its text.
        const body: unknown = res.type.startsWith('text/') ? res.text : res.body;
        expectValid(body, `${id}#/${media}/${pointer(res.type, 'schema')}`, what);
      }
      matched.add(`${method.toUpperCase()} ${path} ${res.status}`);
    },
  };
}

/** The admin listener's document (default page limits, as in admin-fixtures.ts). */
export const openApiDocument = createAdminOpenApiDocument({ defaultLimit: 50, maxLimit: 500 });

const adminListener = createOpenApiValidator(openApiDocument);
const trayListener = createOpenApiValidator(createTrayOpenApiDocument());

/** Fails unless the answer is what its listener's document (/admin paths: the admin one) says of this operation. */
export function expectMatchesOpenApi(res: Answer, method: string, path: string): void {
  (path.startsWith('/admin') ? adminListener : trayListener).expectMatches(res, method, path);
}
