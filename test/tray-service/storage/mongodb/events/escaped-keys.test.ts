import { expect } from 'chai';
import fc from 'fast-check';
import {
  escapeKeys,
  hasRefusedKey,
  payloadOf,
  unescapeKeys,
} from '../../../../../tray-service/storage/mongodb/events/escaped-keys.ts';
import { useFastCheckSeed } from '../../../../support/fast-check-seed.ts';

useFastCheckSeed();

describe('storage/mongodb/events/escaped-keys', () => {
  it('finds a key starting with $ or holding a dot at any depth, in arrays too', () => {
    expect(hasRefusedKey({ a: { b: [1, 'x.y', '$z'] }, a$: 1 })).to.equal(false);
    expect(hasRefusedKey({ $type: 1 })).to.equal(true);
    expect(hasRefusedKey({ a: { 'b.c': 1 } })).to.equal(true);
    expect(hasRefusedKey({ a: [{}, [{ $in: 1 }]] })).to.equal(true);
  });

  it('escapes every %, $ and . of every key, leaving values as they are', () => {
    expect(escapeKeys({ $type: '$x', 'a.b': ['.'], '%24': { '%': '%', 'c$.d': [{ $: 1 }] } })).to.deep.equal({
      '%24type': '$x',
      'a%2Eb': ['.'],
      '%2524': { '%25': '%', 'c%24%2Ed': [{ '%24': 1 }] },
    });
    expect(hasRefusedKey(escapeKeys({ $: { '.': [{ '$.': 1 }] } }))).to.equal(false);
  });

  it('keeps __proto__ a key of its own, escaped or not', () => {
    const data = JSON.parse('{"__proto__": {"$a": 1}, "b.c": 2}') as Record<string, unknown>;
    const escaped = escapeKeys(data);
    expect(Object.keys(escaped)).to.deep.equal(['__proto__', 'b%2Ec']);
    expect(JSON.stringify(unescapeKeys(escaped))).to.equal(JSON.stringify(data));
  });

  it('round-trips any JSON exactly, keys that already look escaped included', () => {
    const key = fc.string({
      unit: fc.constantFrom(
        '%',
        '$',
        '.',
        '2',
        '4',
        '5',
        'E',
        'e',
        'a',
        '%2E',
        '%24',
        '%25',
        '[',
        ']',
        '%[]',
      ),
    });
    const json = fc.dictionary(key, fc.jsonValue());
    fc.assert(
      fc.property(json, (data) => {
        expect(JSON.stringify(unescapeKeys(escapeKeys(data)))).to.equal(JSON.stringify(data));
      }),
    );
  });

  // FerretDB refuses a document with an array directly inside an array ("nested arrays are not
  // supported"): such an event failed its job on every attempt.
  it('holds each array inside an array in an object, and leaves none in the escaped payload', () => {
    const data = {
      geo: [
        [1, 2],
        [3, [4, []]],
      ],
      odd: [{ '%[]': [1] }],
    };
    expect(hasRefusedKey(data)).to.equal(true);
    expect(hasRefusedKey({ a: [{ b: [1] }] })).to.equal(false);
    expect(escapeKeys(data)).to.deep.equal({
      geo: [{ '%[]': [1, 2] }, { '%[]': [3, { '%[]': [4, { '%[]': [] }] }] }],
      odd: [{ '%25[]': [1] }],
    });
    expect(unescapeKeys(escapeKeys(data))).to.deep.equal(data);
    const arrayInArray = (value: unknown): boolean =>
      Array.isArray(value)
        ? value.some((item) => Array.isArray(item) || arrayInArray(item))
        : typeof value === 'object' && value !== null && Object.values(value).some(arrayInArray);
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (json) => {
        expect(arrayInArray(escapeKeys(json))).to.equal(false);
        expect(hasRefusedKey(escapeKeys(json))).to.equal(false);
      }),
    );
  });

  it('reads a document’s payload as stored unless the document says its keys are escaped', () => {
    // A document of a release before the escape: its `%24` is a key as received.
    expect(payloadOf({ data: { '%24': 1 } })).to.deep.equal({ '%24': 1 });
    expect(payloadOf({ data: { '%24': 1 }, keysEscaped: true })).to.deep.equal({ $: 1 });
  });
});
