import { Ajv2020 } from 'ajv/dist/2020.js';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Record<string, unknown>;
}
export type OpenApiPaths = { paths: Record<string, Record<string, { parameters?: readonly Parameter[] }>> };

/**
 * Reads a request as the server receives it and says whether it breaks the OpenAPI document, so a
 * test can demand 4xx for every request that does. schemathesis's own negative_data_rejection
 * check judges the data it generated, not what was sent: in 3.x a negated query value such as
 * null is left out of the URL, the request that goes out is valid, and a 200 is reported as
 * "accepted negative data". Unknown and repeated query parameters count as violations, as the
 * admin operations' descriptions say they are refused.
 */
export function createRequestChecker(document: OpenApiPaths) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // Literal paths first, so /admin/events/export is never read as /admin/events/{key}.
  const templates = Object.keys(document.paths)
    .sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')))
    .map((template) => ({
      template,
      names: [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? ''),
      regex: new RegExp(`^${template.replace(/\{\w+\}/g, '([^/]+)')}$`),
    }));

  const violates = (parameter: Parameter, raw: string): string | undefined => {
    const value = parameter.schema.type === 'integer' && /^-?[0-9]+$/.test(raw) ? Number(raw) : raw;
    const validate = ajv.compile(parameter.schema);
    return validate(value) ? undefined : `${parameter.name}: ${ajv.errorsText(validate.errors)}`;
  };

  /** The operation's path template and the first violation found, if any. */
  return function check(
    method: string,
    path: string,
    search: string,
  ): { operation: string; violation?: string } {
    const match = templates.find(({ regex }) => regex.test(path));
    if (!match) return { operation: path, violation: 'no such path in the document' };
    const parameters = document.paths[match.template]?.[method.toLowerCase()]?.parameters ?? [];
    const operation = match.template;
    const values = regexValues(match.regex, path);
    for (const [index, name] of match.names.entries()) {
      const parameter = parameters.find((p) => p.in === 'path' && p.name === name);
      let raw: string;
      try {
        raw = decodeURIComponent(values[index] ?? '');
      } catch {
        return { operation, violation: `${name}: not percent-decodable` };
      }
      const violation = parameter && violates(parameter, raw);
      if (violation) return { operation, violation };
    }
    const query = new URLSearchParams(search);
    for (const name of new Set(query.keys())) {
      const parameter = parameters.find((p) => p.in === 'query' && p.name === name);
      if (!parameter) return { operation, violation: `${name}: unknown parameter` };
      const all = query.getAll(name);
      if (all.length > 1) return { operation, violation: `${name}: repeated` };
      const violation = violates(parameter, all[0] ?? '');
      if (violation) return { operation, violation };
    }
    const missing = parameters.find((p) => p.in === 'query' && p.required && !query.has(p.name));
    return missing ? { operation, violation: `${missing.name}: missing` } : { operation };
  };
}

function regexValues(regex: RegExp, path: string): string[] {
  return (regex.exec(path) ?? []).slice(1).map(String);
}
