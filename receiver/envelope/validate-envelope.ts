import { isUtf8 } from 'node:buffer';

export interface Envelope {
  readonly event: string;
  /**
   * The `data` object's JSON text as sent, on one line: its insignificant line breaks are spaces.
   * The job carries it as it is, so the body is checked but never parsed into objects and
   * serialised again (BENCHMARKS.md, "Receiver"); the worker's JSON.parse sees the same value.
   */
  readonly dataJson: string;
}

export type EnvelopeResult =
  { readonly ok: true; readonly envelope: Envelope } | { readonly ok: false; readonly message: string };

/** Deep enough for every payload in docs/contract.md#event-catalogue (about 5 levels), far from a parser's limits. */
export const maxJsonDepth = 32;
const maxEventNameLength = 200;

const fail = (message: string): EnvelopeResult => ({ ok: false, message });
const notJson = fail('request body is not valid JSON');
const tooDeep = fail(`request body is nested deeper than ${maxJsonDepth} levels`);
const eventMessage = `"event" must be a non-empty string of at most ${maxEventNameLength} characters`;
const typeMessage = `"type" must be a non-empty string of at most ${maxEventNameLength} characters`;

/**
 * Which envelope a body must have: `platform`, the platform's `{event, data}`
 * (docs/contract.md#envelope), or `standard-webhooks`, Standard Webhooks' payload: an object with a
 * string `type` (docs/receiver.md#what-a-standard-webhooks-sender-gets).
 */
export type EnvelopeShape = 'platform' | 'standard-webhooks';

/**
 * The delivery envelope (docs/contract.md#envelope): a JSON object with a string `event` and
 * an object `data`. The body must be valid UTF-8 JSON (RFC 8259) nested at most `maxJsonDepth`
 * levels. As with JSON.parse, a key given twice counts with its last value, and a leading byte
 * order mark is ignored. Messages name the problem without echoing the body.
 *
 * A Standard Webhooks payload is an object with a string `type` (its other members, such as
 * `timestamp` and `data`, are the sender's): the event is the `type`, and the job's data is the
 * whole payload, so nothing the sender sent is left out.
 *
 * Why a scanner and not JSON.parse: the receiver only has to know that the body is valid and where
 * `event` and `data` are. Parsing built every object of the payload and the job then serialised
 * them again, about a third of the receiver's CPU per request. test/receiver/envelope checks the
 * scanner's verdict against JSON.parse on generated and mutated bodies.
 */
export function validateEnvelope(body: Buffer, shape: EnvelopeShape = 'platform'): EnvelopeResult {
  if (!isUtf8(body)) return fail('request body is not valid UTF-8');
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  const scan = scanJson(body, start);
  if (scan === tooDeepAt) return tooDeep;
  if (typeof scan === 'number') return notJson;
  // Valid JSON that is not an object gets its own message.
  const objectStart = skipSpace(body, start, body.length);
  if (body[objectStart] !== 0x7b) return fail('request body must be a JSON object');

  if (shape === 'standard-webhooks') {
    const type = nameAt(body, scan.typeStart, scan.typeEnd);
    if (type === undefined) return fail(typeMessage);
    return { ok: true, envelope: { event: type, dataJson: oneLine(body.toString('utf8', objectStart)) } };
  }
  const event = nameAt(body, scan.eventStart, scan.eventEnd);
  if (event === undefined) return fail(eventMessage);
  const { dataStart, dataEnd } = scan;
  if (dataStart < 0 || body[dataStart] !== 0x7b) return fail('"data" must be a JSON object');
  return { ok: true, envelope: { event, dataJson: oneLine(body.toString('utf8', dataStart, dataEnd)) } };
}

/** The event name a member's value holds, if it is a string of the allowed length. */
function nameAt(body: Buffer, valueStart: number, valueEnd: number): string | undefined {
  if (valueStart < 0 || body[valueStart] !== 0x22) return undefined;
  const name = stringValue(body, valueStart, valueEnd);
  return name === '' || name.length > maxEventNameLength ? undefined : name;
}

/** Only whitespace can hold a line break in valid JSON; the spool and replay read one job a line. */
const oneLine = (json: string) =>
  json.includes('\n') || json.includes('\r') ? json.replace(/[\r\n]/g, ' ') : json;

/** Where the last `event`, `data` and `type` members of a top-level object are (value start, index past it). */
interface Members {
  eventStart: number;
  eventEnd: number;
  dataStart: number;
  dataEnd: number;
  typeStart: number;
  typeEnd: number;
}

/** Returned by scanJson when the nesting limit is passed; any other number: invalid. */
const tooDeepAt = -2;
const invalid = -1;

const objectOpen = 0x7b;
const member = { none: 0, event: 1, data: 2, type: 3 } as const;
const trueBytes = Buffer.from('true');
const falseBytes = Buffer.from('false');
const nullBytes = Buffer.from('null');

/**
 * Checks that `bytes` from `start` is exactly one JSON value (RFC 8259; the bytes are valid UTF-8
 * already) nested at most maxJsonDepth levels, and notes the members of a top-level object.
 *
 * One loop with an explicit stack instead of a recursive descent: on a 1.5 KB body it takes a third
 * of the time (BENCHMARKS.md, "Receiver"), and no input can exhaust the call stack. Every read is
 * bounds-checked, so the optimised code never sees an out-of-range (undefined) byte.
 */
function scanJson(bytes: Buffer, start: number): Members | number {
  const n = bytes.length;
  // The opening byte of each open container: open[depth] is the innermost.
  const open = new Uint8Array(maxJsonDepth + 1);
  let depth = 0;
  const found: Members = {
    eventStart: -1,
    eventEnd: -1,
    dataStart: -1,
    dataEnd: -1,
    typeStart: -1,
    typeEnd: -1,
  };
  // The top-level member whose value is being scanned, and where that value starts.
  let current: number = member.none;
  let valueStart = -1;
  let expectKey = false;
  let i = skipSpace(bytes, start, n);
  for (;;) {
    if (expectKey) {
      if (i >= n || bytes[i] !== 0x22) return invalid;
      const keyStart = i;
      i = scanString(bytes, i, n);
      if (i < 0) return invalid;
      if (depth === 1) current = memberOf(bytes, keyStart, i);
      i = skipSpace(bytes, i, n);
      if (i >= n || bytes[i] !== 0x3a) return invalid;
      i = skipSpace(bytes, i + 1, n);
      if (depth === 1) valueStart = i;
      expectKey = false;
    }
    // A value starts at i.
    if (i >= n) return invalid;
    const c = bytes[i] as number;
    if (c === objectOpen || c === 0x5b) {
      if (depth === maxJsonDepth) return tooDeepAt;
      depth += 1;
      open[depth] = c;
      i = skipSpace(bytes, i + 1, n);
      if (i < n && bytes[i] === closing(c)) {
        depth -= 1;
        i += 1;
      } else {
        expectKey = c === objectOpen;
        continue;
      }
    } else if (c === 0x22) i = scanString(bytes, i, n);
    else if (c === 0x74) i = scanLiteral(bytes, i, n, trueBytes);
    else if (c === 0x66) i = scanLiteral(bytes, i, n, falseBytes);
    else if (c === 0x6e) i = scanLiteral(bytes, i, n, nullBytes);
    else i = scanNumber(bytes, i, n);
    if (i < 0) return invalid;

    // A value (a scalar or a whole container) ends at i: close what it completes, find the next one.
    for (;;) {
      if (depth === 1 && current !== member.none) {
        if (current === member.event) {
          found.eventStart = valueStart;
          found.eventEnd = i;
        } else if (current === member.data) {
          found.dataStart = valueStart;
          found.dataEnd = i;
        } else {
          found.typeStart = valueStart;
          found.typeEnd = i;
        }
        current = member.none;
      }
      if (depth === 0) return skipSpace(bytes, i, n) === n ? found : invalid;
      i = skipSpace(bytes, i, n);
      if (i >= n) return invalid;
      const next = bytes[i] as number;
      if (next === 0x2c) {
        i = skipSpace(bytes, i + 1, n);
        expectKey = open[depth] === objectOpen;
        break;
      }
      if (next !== closing(open[depth] as number)) return invalid;
      depth -= 1;
      i += 1;
    }
  }
}

const closing = (opening: number) => (opening === objectOpen ? 0x7d : 0x5d);

function skipSpace(bytes: Buffer, from: number, n: number): number {
  let i = from;
  while (i < n) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i += 1;
  }
  return i;
}

/** Which envelope member a top-level key names. Compared by length first: most keys are none. */
function memberOf(bytes: Buffer, keyStart: number, keyEnd: number): number {
  const length = keyEnd - keyStart;
  if (length !== 7 && length !== 6 && !bytes.subarray(keyStart, keyEnd).includes(0x5c)) return member.none;
  const key = stringValue(bytes, keyStart, keyEnd);
  if (key === 'event') return member.event;
  if (key === 'data') return member.data;
  return key === 'type' ? member.type : member.none;
}

/** The text of a string token (quotes included) as JavaScript would read it. */
function stringValue(bytes: Buffer, start: number, end: number): string {
  const text = bytes.toString('utf8', start + 1, end - 1);
  // Escapes are rare in the names compared here; JSON.parse decodes them exactly.
  return text.includes('\\') ? (JSON.parse(bytes.toString('utf8', start, end)) as string) : text;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/** A string token starting at the quote at `start`; the index past its closing quote, or invalid. */
function scanString(bytes: Buffer, start: number, n: number): number {
  let i = start + 1;
  while (i < n) {
    const c = bytes[i] as number;
    if (c === 0x22) return i + 1;
    if (c < 0x20) return invalid; // a raw control character
    // Kept out of this loop, so the loop stays small enough to be inlined where strings are scanned.
    i = c === 0x5c ? scanEscape(bytes, i, n) : i + 1;
    if (i < 0) return invalid;
  }
  return invalid; // unterminated
}

/** The escape sequence at the backslash at `start`; the index past it, or invalid. */
function scanEscape(bytes: Buffer, start: number, n: number): number {
  if (start + 1 >= n) return invalid;
  const escaped = bytes[start + 1] as number;
  if (escaped === 0x75) {
    if (start + 5 >= n) return invalid;
    for (let k = 2; k < 6; k += 1) if (!isHex(bytes[start + k] as number)) return invalid;
    return start + 6;
  }
  return escaped === 0x22 || // "
    escaped === 0x5c || // \
    escaped === 0x2f || // /
    escaped === 0x62 || // b
    escaped === 0x66 || // f
    escaped === 0x6e || // n
    escaped === 0x72 || // r
    escaped === 0x74 // t
    ? start + 2
    : invalid;
}

/** Digits from `from`; the index past the last one. */
function skipDigits(bytes: Buffer, from: number, n: number): number {
  let i = from;
  while (i < n && isDigit(bytes[i] as number)) i += 1;
  return i;
}

function scanNumber(bytes: Buffer, start: number, n: number): number {
  let i = start;
  if (i < n && bytes[i] === 0x2d) i += 1;
  if (i >= n) return invalid;
  if (bytes[i] === 0x30) i += 1;
  else if (isDigit(bytes[i] as number)) i = skipDigits(bytes, i + 1, n);
  else return invalid;
  if (i < n && bytes[i] === 0x2e) {
    if (i + 1 >= n || !isDigit(bytes[i + 1] as number)) return invalid;
    i = skipDigits(bytes, i + 2, n);
  }
  if (i < n && (bytes[i] === 0x65 || bytes[i] === 0x45)) {
    i += 1;
    if (i < n && (bytes[i] === 0x2b || bytes[i] === 0x2d)) i += 1;
    if (i >= n || !isDigit(bytes[i] as number)) return invalid;
    i = skipDigits(bytes, i + 1, n);
  }
  return i;
}

function scanLiteral(bytes: Buffer, start: number, n: number, word: Buffer): number {
  if (start + word.length > n) return invalid;
  for (let k = 0; k < word.length; k += 1) if (bytes[start + k] !== word[k]) return invalid;
  return start + word.length;
}
