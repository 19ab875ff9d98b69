import { expect } from 'chai';
import fc from 'fast-check';
import {
  maxJsonDepth,
  validateEnvelope,
  type EnvelopeResult,
} from '../../../receiver/envelope/validate-envelope.ts';

const check = (text: string | Buffer) => validateEnvelope(Buffer.isBuffer(text) ? text : Buffer.from(text));

/** The data the job will carry, as the worker's JSON.parse reads it. */
const dataOf = (result: EnvelopeResult) => {
  if (!result.ok) throw new Error(`refused: ${result.message}`);
  return JSON.parse(result.envelope.dataJson) as unknown;
};

describe('validateEnvelope', () => {
  it('accepts an object with a string event and an object data', () => {
    const result = check('{"event":"post.didCreate","data":{"a":[1]}}');
    expect(result).to.deep.equal({ ok: true, envelope: { event: 'post.didCreate', dataJson: '{"a":[1]}' } });
  });

  for (const [text, message] of [
    ['null', 'must be a JSON object'],
    ['[1]', 'must be a JSON object'],
    ['{"data":{}}', '"event"'],
    ['{"event":"","data":{}}', '"event"'],
    ['{"event":1,"data":{}}', '"event"'],
    [`{"event":"${'e'.repeat(201)}","data":{}}`, '"event"'],
    ['{"event":"x"}', '"data"'],
    ['{"event":"x","data":null}', '"data"'],
    ['{"event":"x","data":"s"}', '"data"'],
    ['{"event":"x","data":[]}', '"data"'],
    ['{"event":"x","data":{}', 'not valid JSON'],
    ['{"event":"x","data":{}} x', 'not valid JSON'],
    ['{"event":"x","data":{"a":01}}', 'not valid JSON'],
    ['{"event":"x","data":{"a":"\u0001"}}', 'not valid JSON'],
    ['{"event":"x","data":{"a":"\u001f"}}', 'not valid JSON'],
    ['{"event":"x","data":{"a":"\u007f"}}', 'ok'],
    ['{"event":"x","data":{"a":"\\x"}}', 'not valid JSON'],
    ['{"event":"x","data":{"a":[1,]}}', 'not valid JSON'],
    ['{"event":"x","data":{"a":tru}}', 'not valid JSON'],
    ['{"event":"x","data":{"a":[1}}}', 'not valid JSON'],
    ['{"event":"x","data":{"a":{"b":1]]}', 'not valid JSON'],
    ['{"event":"x","data":{"a":"\\u00fg"}}', 'not valid JSON'],
    ['{"event":"x","data":{"a":"\\u00FF\\u00ff"}}', 'ok'],
    ['', 'not valid JSON'],
  ] as const) {
    it(`${message === 'ok' ? 'accepts' : 'refuses'} ${JSON.stringify(text.slice(0, 40))}`, () => {
      if (message === 'ok') return void expect(check(text).ok).to.equal(true);
      expect(check(text))
        .to.deep.include({ ok: false })
        .and.to.have.property('message')
        .that.includes(message);
    });
  }

  it('refuses invalid UTF-8', () => {
    expect(check(Buffer.from([0x7b, 0xff, 0x7d]))).to.deep.equal({
      ok: false,
      message: 'request body is not valid UTF-8',
    });
  });

  it(`accepts nesting up to ${maxJsonDepth} levels and refuses one more`, () => {
    const nested = (levels: number) =>
      `{"event":"x","data":${'{"a":'.repeat(levels - 2)}{}${'}'.repeat(levels - 2)}}`;
    expect(check(nested(maxJsonDepth)).ok).to.equal(true);
    expect(check(nested(maxJsonDepth + 1))).to.deep.include({ ok: false });
  });

  it('refuses a million opening brackets as too deep, without exhausting the stack', () => {
    expect(check('['.repeat(1_000_000)))
      .to.have.property('message')
      .that.includes('nested deeper');
    expect(check(`{"a":${'['.repeat(1_000_000)}`))
      .to.have.property('message')
      .that.includes('nested deeper');
  });

  it('ignores brackets and quotes inside strings, also after escaped quotes', () => {
    const result = check('{"event":"x","data":{"a":"[[[\\"{{{"}}');
    expect(dataOf(result)).to.deep.equal({ a: '[[["{{{' });
  });

  it('takes the last of repeated keys, and keys written with escapes, as JSON.parse does', () => {
    const result = check('{"event":"a","data":{"n":1},"\\u0065vent":"b","dat\\u0061":{"n":2}}');
    expect(result.ok && result.envelope.event).to.equal('b');
    expect(dataOf(result)).to.deep.equal({ n: 2 });
  });

  it('ignores a leading byte order mark and decodes escapes in the event name', () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"event":"p\\u00f6st","data":{}}'),
    ]);
    expect(check(body)).to.deep.equal({ ok: true, envelope: { event: 'pöst', dataJson: '{}' } });
  });

  it('hands on a pretty-printed body on one line, and large numbers as the sender wrote them', () => {
    const body =
      '{\r\n  "event": "x",\n  "data": {\n    "id": 12345678901234567890123,\n    "s": "a b"\n  }\n}';
    const result = check(body);
    expect(result.ok && result.envelope.dataJson).to.not.match(/[\r\n]/);
    expect(result.ok && result.envelope.dataJson).to.include('12345678901234567890123');
    expect(dataOf(result)).to.deep.equal(JSON.parse(body).data);
  });

  it('refuses a body whose first character merely resembles a byte order mark in its UTF-8 bytes', () => {
    const rest = '{"event":"x","data":{}}';
    // U+1EFF (e1 bb bf), U+F03F (ef 80 bf), U+FEC0 (ef bb 80), and "x¿" (78 c2 bf): each shares
    // one or two of the mark's three bytes.
    for (const lookalike of ['\u1eff', '\uf03f', '\ufec0', 'x\u00bf']) {
      expect(check(`${lookalike}${rest}`), JSON.stringify(lookalike)).to.deep.equal({
        ok: false,
        message: 'request body is not valid JSON',
      });
    }
  });

  it('accepts an event name of exactly 200 characters', () => {
    const event = 'e'.repeat(200);
    expect(check(`{"event":"${event}","data":{}}`)).to.deep.equal({
      ok: true,
      envelope: { event, dataJson: '{}' },
    });
  });

  it('turns each line break in data into one space, keeping every other byte', () => {
    const result = check('{"event":"x","data":{"a":\n1,\r"b":\r\n2}}');
    expect(result.ok && result.envelope.dataJson).to.equal('{"a": 1, "b":  2}');
  });

  for (const [escape, ok] of [
    ['\\u0039', true],
    ['\\u00A0', true],
    ['\\u00a0', true],
    ['\\u00F0', true],
    ['\\u00f0', true],
    ['\\u00/0', false],
    ['\\u00:0', false],
    ['\\u00@0', false],
    ['\\u00G0', false],
    ['\\u00`0', false],
    ['\\u00g0', false],
    ['\\/', true],
    ['\\b\\f\\n\\r\\t\\"\\\\', true],
  ] as const) {
    it(`${ok ? 'accepts' : 'refuses'} the escape ${escape} in a string`, () => {
      const text = `{"event":"x","data":{"a":"${escape}"}}`;
      expect(check(text).ok).to.equal(ok);
      if (ok) expect(dataOf(check(text))).to.deep.equal(JSON.parse(`{"a":"${escape}"}`));
    });
  }

  for (const number of ['1e5', '1E5', '1e+5', '1E-5', '-0.5e1', '0']) {
    it(`accepts the number ${number}`, () => {
      expect(dataOf(check(`{"event":"x","data":{"n":${number}}}`))).to.deep.equal({ n: Number(number) });
    });
  }
});

/**
 * The oracle: the envelope rules written with TextDecoder and JSON.parse (how the receiver checked
 * bodies before the scanner). Undefined means "too deep" (the scanner may say so before it finds a
 * syntax error further on, so that verdict is compared separately).
 */
function oracle(body: Buffer): { ok: true; event: string; data: unknown } | { ok: false; message: string } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return { ok: false, message: 'request body is not valid UTF-8' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, message: 'request body is not valid JSON' };
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(parsed)) return { ok: false, message: 'request body must be a JSON object' };
  const { event, data } = parsed;
  if (typeof event !== 'string' || event === '' || event.length > 200) {
    return { ok: false, message: '"event" must be a non-empty string of at most 200 characters' };
  }
  if (!isObject(data)) return { ok: false, message: '"data" must be a JSON object' };
  return { ok: true, event, data };
}

const depthOf = (value: unknown): number =>
  typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;

/** The deepest its brackets outside strings go in a text, valid JSON or not (the top level is 1). */
function bracketDepth(text: string): number {
  let depth = 0;
  let most = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') most = Math.max(most, ++depth);
    else if (char === '}' || char === ']') depth -= 1;
  }
  return most;
}

/** Same verdict as the oracle; for accepted bodies, the same event and data. */
function agreesWithOracle(body: Buffer): void {
  const ours = validateEnvelope(body);
  const theirs = oracle(body);
  if (!ours.ok && ours.message.includes('nested deeper')) {
    // Too deep: then the text goes deeper than the limit (the scanner may say so before it meets
    // a syntax error further on, so invalid text gets this verdict too, but only when it is deep).
    if (theirs.ok)
      expect(depthOf({ event: theirs.event, data: theirs.data })).to.be.greaterThan(maxJsonDepth);
    else
      expect(bracketDepth(new TextDecoder().decode(body)), body.toString()).to.be.greaterThan(maxJsonDepth);
    return;
  }
  if (theirs.ok) {
    expect(ours.ok, `accepted by JSON.parse: ${body.toString().slice(0, 200)}`).to.equal(true);
    if (!ours.ok) return;
    expect(ours.envelope.event).to.equal(theirs.event);
    expect(JSON.parse(ours.envelope.dataJson)).to.deep.equal(theirs.data);
    expect(ours.envelope.dataJson).to.not.match(/[\r\n]/);
  } else {
    expect(ours, body.toString().slice(0, 200)).to.deep.equal(theirs);
  }
}

/** Envelope-like values: mostly valid envelopes, some with wrong event or data, some other JSON. */
const envelopeLike = fc.oneof(
  fc.record(
    {
      event: fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.jsonValue({ maxDepth: 1 })),
      data: fc.oneof(
        { weight: 5, arbitrary: fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 6 })) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
      ),
      extra: fc.jsonValue({ maxDepth: 3 }),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
  // Around the depth limit, objects and arrays mixed: the scanner's depth count against JSON.parse.
  fc
    .tuple(
      fc.integer({ min: maxJsonDepth - 3, max: maxJsonDepth + 3 }),
      fc.array(fc.boolean(), { minLength: maxJsonDepth + 3, maxLength: maxJsonDepth + 3 }),
    )
    .map(([levels, arrays]) => ({
      event: 'deep',
      data: arrays
        .slice(0, levels - 2)
        .reduceRight<unknown>((inner, isArray) => (isArray ? [inner] : { a: inner }), {}),
    })),
);
const indent = fc.constantFrom(undefined, 0, 2, '\t', '\r\n ');
const serialised = fc.tuple(envelopeLike, indent).map(([value, space]) => JSON.stringify(value, null, space));

/** One edit that often breaks JSON, sometimes not: delete, insert or replace one character. */
const mutation = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom('delete', 'insert', 'replace'),
  char: fc.constantFrom(...'{}[]",:\\ 0123456789eE+-.tfnrualsx\u00e9\u0001\t\n\r\f\v\u00a0\ufeff/'.split('')),
});
const mutate = (text: string, edit: { at: number; kind: string; char: string }) => {
  const at = text.length === 0 ? 0 : edit.at % text.length;
  if (edit.kind === 'delete') return text.slice(0, at) + text.slice(at + 1);
  if (edit.kind === 'insert') return text.slice(0, at) + edit.char + text.slice(at);
  return text.slice(0, at) + edit.char + text.slice(at + 1);
};

describe('validateEnvelope against JSON.parse (properties)', () => {
  it('agrees on generated envelopes and other JSON, compact or pretty-printed', () => {
    fc.assert(
      fc.property(serialised, (text) => agreesWithOracle(Buffer.from(text))),
      { numRuns: 3_000 },
    );
  });

  it('agrees after one or two edits of such a text (mostly invalid JSON)', () => {
    fc.assert(
      fc.property(serialised, fc.array(mutation, { minLength: 1, maxLength: 2 }), (text, edits) =>
        agreesWithOracle(Buffer.from(edits.reduce(mutate, text))),
      ),
      { numRuns: 5_000 },
    );
  });

  it('agrees on arbitrary bytes and arbitrary strings (UTF-8 checks included)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
          fc.string({ unit: 'binary', maxLength: 64 }).map((text) => Buffer.from(text)),
        ),
        agreesWithOracle,
      ),
      { numRuns: 3_000 },
    );
  });
});

describe('validateEnvelope for a Standard Webhooks payload', () => {
  const standard = (text: string) => validateEnvelope(Buffer.from(text), 'standard-webhooks');

  it('takes the event from type and hands on the whole payload as the data, on one line', () => {
    const body =
      '\ufeff {"type":"invoice.paid",\n"timestamp":"2026-11-20T09:00:00Z","data":{"n":12345678901234567890}}\n';
    const result = standard(body);
    expect(result.ok && result.envelope.event).to.equal('invoice.paid');
    expect(result.ok && result.envelope.dataJson).to.not.match(/[\r\n]/);
    expect(result.ok && result.envelope.dataJson).to.include('12345678901234567890');
    expect(dataOf(result)).to.deep.equal(JSON.parse(body.slice(1)));
  });

  it('does not ask for data or timestamp: Standard Webhooks only recommends them', () => {
    expect(standard('{"type":"ping"}')).to.deep.equal({
      ok: true,
      envelope: { event: 'ping', dataJson: '{"type":"ping"}' },
    });
  });

  for (const [text, message] of [
    ['{"event":"x","data":{}}', '"type" must be a non-empty string'],
    ['{"type":"","data":{}}', '"type" must be a non-empty string'],
    ['{"type":{"a":1}}', '"type" must be a non-empty string'],
    ['["type"]', 'must be a JSON object'],
    ['{"type":"x"', 'not valid JSON'],
  ] as const) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      expect(standard(text)).to.have.property('message').that.includes(message);
    });
  }

  it('reads a type nested deeper as no type: only the top level counts', () => {
    expect(standard('{"data":{"type":"x"}}')).to.have.property('message').that.includes('"type"');
  });
});
