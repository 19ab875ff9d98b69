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

/** Deep enough for every payload in spec/events.md (about 5 levels), far from a parser's limits. */
export const maxJsonDepth = 32;
const maxEventNameLength = 200;

const fail = (message: string): EnvelopeResult => ({ ok: false, message });
const notJson = fail('request body is not valid JSON');
const tooDeep = fail(`request body is nested deeper than ${maxJsonDepth} levels`);
const eventMessage = `"event" must be a non-empty string of at most ${maxEventNameLength} characters`;

/**
 * The delivery envelope (platform document, section 2.6): a JSON object with a string `event` and
 * an object `data`. The body must be valid UTF-8 JSON (RFC 8259) nested at most `maxJsonDepth`
 * levels. As with JSON.parse, a key given twice counts with its last value, and a leading byte
 * order mark is ignored. Messages name the problem without echoing the body.
 *
 * Why a scanner and not JSON.parse: the receiver only has to know that the body is valid and where
 * `event` and `data` are. Parsing built every object of the payload and the job then serialised
 * them again, about a third of the receiver's CPU per request. test/receiver/envelope checks the
 * scanner's verdict against JSON.parse on generated and mutated bodies.
 */
export function validateEnvelope(body: Buffer): EnvelopeResult {
  if (!isUtf8(body)) return fail('request body is not valid UTF-8');
  const scanner = new JsonScanner(body);
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  const first = scanner.skipSpace(start);
  if (body[first] !== 0x7b) {
    // Valid JSON that is not an object gets its own message.
    const end = scanner.value(first, 1);
    if (end === tooDeepAt) return tooDeep;
    return end >= 0 && scanner.skipSpace(end) === body.length
      ? fail('request body must be a JSON object')
      : notJson;
  }
  const members = scanner.topLevelObject(first);
  if (members === tooDeepAt) return tooDeep;
  if (members < 0 || scanner.skipSpace(members) !== body.length) return notJson;

  const { eventStart, eventEnd, dataStart, dataEnd } = scanner;
  if (eventStart < 0 || body[eventStart] !== 0x22) return fail(eventMessage);
  const event = scanner.stringValue(eventStart, eventEnd);
  if (event === '' || event.length > maxEventNameLength) return fail(eventMessage);
  if (dataStart < 0 || body[dataStart] !== 0x7b) return fail('"data" must be a JSON object');
  let dataJson = body.toString('utf8', dataStart, dataEnd);
  // Only whitespace can hold a line break in valid JSON; the spool and replay read one job a line.
  if (scanner.sawLineBreak) dataJson = dataJson.replace(/[\r\n]/g, ' ');
  return { ok: true, envelope: { event, dataJson } };
}

/** Returned by the scanning methods when the nesting limit is passed; any other negative: invalid. */
const tooDeepAt = -2;
const invalid = -1;

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) =>
  c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));

/**
 * A validating JSON scanner over UTF-8 bytes (already checked to be valid UTF-8). Each method takes
 * the index where a token starts and returns the index just past it, or a negative code. Nothing is
 * allocated while scanning; recursion is bounded by the nesting limit.
 */
class JsonScanner {
  eventStart = -1;
  eventEnd = -1;
  dataStart = -1;
  dataEnd = -1;
  sawLineBreak = false;
  private readonly bytes: Buffer;

  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }

  skipSpace(from: number): number {
    const { bytes } = this;
    let i = from;
    for (;;) {
      const c = bytes[i];
      if (c === 0x20 || c === 0x09) i += 1;
      else if (c === 0x0a || c === 0x0d) {
        this.sawLineBreak = true;
        i += 1;
      } else return i;
    }
  }

  /** The envelope itself: like object(), but it notes where the `event` and `data` values are. */
  topLevelObject(start: number): number {
    return this.object(start, 1, true);
  }

  value(start: number, depth: number): number {
    const c = this.bytes[start];
    if (c === 0x22) return this.string(start);
    if (c === 0x7b) return this.object(start, depth, false);
    if (c === 0x5b) return this.array(start, depth);
    if (c === 0x74) return this.literal(start, 'true');
    if (c === 0x66) return this.literal(start, 'false');
    if (c === 0x6e) return this.literal(start, 'null');
    return this.number(start);
  }

  /** The text of a string token (quotes included) as JavaScript would read it. */
  stringValue(start: number, end: number): string {
    const text = this.bytes.toString('utf8', start + 1, end - 1);
    // Escapes are rare in the names compared here; JSON.parse decodes them exactly.
    return text.includes('\\') ? (JSON.parse(this.bytes.toString('utf8', start, end)) as string) : text;
  }

  private object(start: number, depth: number, envelope: boolean): number {
    if (depth > maxJsonDepth) return tooDeepAt;
    const { bytes } = this;
    let i = this.skipSpace(start + 1);
    if (bytes[i] === 0x7d) return i + 1;
    for (;;) {
      if (bytes[i] !== 0x22) return invalid;
      const keyStart = i;
      i = this.string(i);
      if (i < 0) return i;
      const keyEnd = i;
      i = this.skipSpace(i);
      if (bytes[i] !== 0x3a) return invalid;
      const valueStart = this.skipSpace(i + 1);
      i = this.value(valueStart, depth + 1);
      if (i < 0) return i;
      if (envelope) this.noteMember(keyStart, keyEnd, valueStart, i);
      i = this.skipSpace(i);
      if (bytes[i] === 0x7d) return i + 1;
      if (bytes[i] !== 0x2c) return invalid;
      i = this.skipSpace(i + 1);
    }
  }

  private noteMember(keyStart: number, keyEnd: number, valueStart: number, valueEnd: number): void {
    // Compared by length first: almost every key of an envelope is neither.
    const length = keyEnd - keyStart;
    if (length !== 7 && length !== 6 && !this.hasEscape(keyStart, keyEnd)) return;
    const key = this.stringValue(keyStart, keyEnd);
    if (key === 'event') {
      this.eventStart = valueStart;
      this.eventEnd = valueEnd;
    } else if (key === 'data') {
      this.dataStart = valueStart;
      this.dataEnd = valueEnd;
    }
  }

  private hasEscape(start: number, end: number): boolean {
    return this.bytes.subarray(start, end).includes(0x5c);
  }

  private array(start: number, depth: number): number {
    if (depth > maxJsonDepth) return tooDeepAt;
    const { bytes } = this;
    let i = this.skipSpace(start + 1);
    if (bytes[i] === 0x5d) return i + 1;
    for (;;) {
      i = this.value(i, depth + 1);
      if (i < 0) return i;
      i = this.skipSpace(i);
      if (bytes[i] === 0x5d) return i + 1;
      if (bytes[i] !== 0x2c) return invalid;
      i = this.skipSpace(i + 1);
    }
  }

  private string(start: number): number {
    const { bytes } = this;
    let i = start + 1;
    for (;;) {
      const c = bytes[i];
      if (c === undefined || c < 0x20) return invalid; // unterminated, or a raw control character
      if (c === 0x22) return i + 1;
      if (c === 0x5c) {
        const escaped = bytes[i + 1];
        if (escaped === 0x75) {
          if (!isHex(bytes[i + 2]) || !isHex(bytes[i + 3]) || !isHex(bytes[i + 4]) || !isHex(bytes[i + 5])) {
            return invalid;
          }
          i += 6;
        } else if (
          escaped === 0x22 || // "
          escaped === 0x5c || // \
          escaped === 0x2f || // /
          escaped === 0x62 || // b
          escaped === 0x66 || // f
          escaped === 0x6e || // n
          escaped === 0x72 || // r
          escaped === 0x74 // t
        ) {
          i += 2;
        } else return invalid;
      } else i += 1;
    }
  }

  private number(start: number): number {
    const { bytes } = this;
    let i = start;
    if (bytes[i] === 0x2d) i += 1;
    if (bytes[i] === 0x30) i += 1;
    else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i += 1;
    else return invalid;
    if (bytes[i] === 0x2e) {
      i += 1;
      if (!isDigit(bytes[i])) return invalid;
      while (isDigit(bytes[i])) i += 1;
    }
    if (bytes[i] === 0x65 || bytes[i] === 0x45) {
      i += 1;
      if (bytes[i] === 0x2b || bytes[i] === 0x2d) i += 1;
      if (!isDigit(bytes[i])) return invalid;
      while (isDigit(bytes[i])) i += 1;
    }
    return i;
  }

  private literal(start: number, word: 'true' | 'false' | 'null'): number {
    for (let k = 0; k < word.length; k += 1) {
      if (this.bytes[start + k] !== word.charCodeAt(k)) return invalid;
    }
    return start + word.length;
  }
}
