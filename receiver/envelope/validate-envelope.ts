import { jsonDepth } from './json-depth.ts';

export interface Envelope {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

export type EnvelopeResult =
  { readonly ok: true; readonly envelope: Envelope } | { readonly ok: false; readonly message: string };

/** Deep enough for every payload in spec/events.md (about 5 levels), far from a parser's limits. */
export const maxJsonDepth = 32;
const maxEventNameLength = 200;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The delivery envelope (platform document, section 2.6): a JSON object with a string `event` and
 * an object `data`. The body must be valid UTF-8 JSON nested at most `maxJsonDepth` levels.
 * Messages name the problem without echoing the body.
 */
export function validateEnvelope(rawBody: Buffer): EnvelopeResult {
  let text: string;
  try {
    text = utf8.decode(rawBody);
  } catch {
    return { ok: false, message: 'request body is not valid UTF-8' };
  }
  if (jsonDepth(text, maxJsonDepth) > maxJsonDepth) {
    return { ok: false, message: `request body is nested deeper than ${maxJsonDepth} levels` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, message: 'request body is not valid JSON' };
  }
  if (!isObject(parsed)) return { ok: false, message: 'request body must be a JSON object' };
  const { event, data } = parsed;
  if (typeof event !== 'string' || event === '' || event.length > maxEventNameLength) {
    return {
      ok: false,
      message: `"event" must be a non-empty string of at most ${maxEventNameLength} characters`,
    };
  }
  if (!isObject(data)) return { ok: false, message: '"data" must be a JSON object' };
  return { ok: true, envelope: { event, data } };
}
