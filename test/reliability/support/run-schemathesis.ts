import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../support/run-script.ts';

/** Installed by `npm run setup:schemathesis` (scripts/setup-schemathesis.sh), or SCHEMATHESIS_BIN. */
export const schemathesisBin = process.env.SCHEMATHESIS_BIN ?? join(repoRoot, '.tools/schemathesis/bin/st');
export const schemathesisExamples = Number(process.env.SCHEMATHESIS_EXAMPLES ?? 100);

/** The checks both schemathesis scenarios run (RELIABILITY.md, "against its OpenAPI document"). */
export const conformanceChecks = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
];

/** One request schemathesis made, from its network log (--cassette-path). */
export interface RecordedRequest {
  method: string;
  /** As sent (percent-encoded), and the query string with its `?`. */
  path: string;
  search: string;
  /** `positive` (data the document calls valid) or `negative` (data it calls invalid). */
  generation: string;
  status: number;
}

export interface SchemathesisResult {
  code: number | null;
  output: string;
  operations: number;
  checks: { check: string; passed: number; total: number }[];
  summary: string | undefined;
  requests: RecordedRequest[];
}

/** The cassette is YAML; these four fields of each interaction are all the figures need. */
function readCassette(text: string): RecordedRequest[] {
  return text
    .split(/^- id: /m)
    .slice(1)
    .map((entry) => {
      // YAML single-quoted scalar: a quote inside is written twice.
      const uri = (/^\s+uri: '((?:[^']|'')*)'/m.exec(entry)?.[1] ?? '/').replaceAll("''", "'");
      const url = new URL(uri, 'http://invalid');
      return {
        method: /^\s+method: '(\w+)'/m.exec(entry)?.[1] ?? '?',
        path: url.pathname,
        search: url.search,
        generation: /^\s+data_generation_method: '(\w+)'/m.exec(entry)?.[1] ?? '?',
        status: Number(/^\s+code: '(\d+)'/m.exec(entry)?.[1] ?? 0),
      };
    });
}

/** `st run` against `base`/openapi.json with one bearer token; `extra` adds filters, checks, modes. */
export function runSchemathesis(options: {
  /** Tells the scenarios' kept network logs apart (SCHEMATHESIS_CASSETTE). */
  name?: string;
  base: string;
  token: string;
  checks: readonly string[];
  extra?: readonly string[];
  timeoutMs: number;
}): Promise<SchemathesisResult> {
  // Hypothesis keeps its example database in the working directory: a temporary one, not the repo.
  const cwd = mkdtempSync(join(tmpdir(), 'schemathesis-'));
  // SCHEMATHESIS_CASSETTE keeps the network log (every request and response) at that path.
  const kept = process.env.SCHEMATHESIS_CASSETTE;
  const cassette = kept
    ? `${kept}${options.name ? `.${options.name}` : ''}.yaml`
    : join(cwd, 'cassette.yaml');
  const args = [
    'run',
    `${options.base}/openapi.json`,
    '--experimental=openapi-3.1',
    '--base-url',
    options.base,
    '-H',
    `Authorization: Bearer ${options.token}`,
    '--checks',
    options.checks.join(','),
    '--hypothesis-max-examples',
    String(schemathesisExamples),
    '--hypothesis-seed',
    process.env.SCHEMATHESIS_SEED ?? '1',
    '--no-color',
    // The network log: every request made, for the request and status counts.
    '--cassette-path',
    cassette,
    ...(options.extra ?? []),
  ];
  return new Promise((resolve) => {
    const child = spawn(schemathesisBin, args, {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const requests = existsSync(cassette) ? readCassette(readFileSync(cassette, 'utf8')) : [];
      rmSync(cwd, { recursive: true, force: true });
      resolve({
        code,
        output,
        operations: Number(/Collected API operations: (\d+)/.exec(output)?.[1] ?? 0),
        checks: [...output.matchAll(/^\s+(\w+)\s+(\d+) \/ (\d+) passed/gm)].map((m) => ({
          check: m[1] ?? '',
          passed: Number(m[2]),
          total: Number(m[3]),
        })),
        summary: /=+ (.* in [\d.]+s) =+/.exec(output)?.[1],
        requests,
      });
    });
  });
}
