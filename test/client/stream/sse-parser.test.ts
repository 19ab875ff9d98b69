import { expect } from 'chai';
import { createSseParser, MAX_EVENT_CHARS } from '../../../client/src/stream/sse-parser.ts';

describe('createSseParser', () => {
  it('reads an event the way the service frames it', () => {
    const parser = createSseParser();
    expect(parser.push('event: unread\nid: k1.a\ndata: {"totalUnreadCount":2}\n\n')).to.deep.equal([
      { event: 'unread', id: 'k1.a', data: '{"totalUnreadCount":2}' },
    ]);
  });

  describe('with the text cut anywhere', () => {
    it('gives the same events, whatever the chunks (CRLF split across two included)', () => {
      const text = 'event: record\r\nid: 7\r\ndata: {"a":1}\r\n\r\n: hb\r\n\r\nevent: read\rdata: x\r\r\n';
      const whole = createSseParser().push(text);
      expect(whole).to.have.length(2);
      for (let cut = 1; cut < text.length; cut += 1) {
        const parser = createSseParser();
        expect(
          [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))],
          `cut at ${cut}`,
        ).to.deep.equal(whole);
      }
    });
  });

  describe('with lines ended by CR alone', () => {
    it('dispatches an event at once, not when the next text comes', () => {
      const parser = createSseParser();
      expect(parser.push('event: unread\rid: 1\rdata: {}\r\r')).to.deep.equal([
        { event: 'unread', id: '1', data: '{}' },
      ]);
    });

    it('takes an LF right after a CR ending the text before for the second half of a CRLF, once', () => {
      const parser = createSseParser();
      expect(parser.push('data: a\r')).to.deep.equal([]);
      expect(parser.push('')).to.deep.equal([]);
      // The LF ends nothing: the CR before it ended the line. The next LF is a blank line.
      expect(parser.push('\n')).to.deep.equal([]);
      expect(parser.push('\ndata: b\r\r')).to.deep.equal([
        { event: 'message', id: '', data: 'a' },
        { event: 'message', id: '', data: 'b' },
      ]);
    });
  });

  describe('with a big chunk of short lines', () => {
    it('reads it in one pass: 2 MB of 700 000 lines in well under a second', () => {
      const chunk = `${': hb\n\n'.repeat(350_000)}event: unread\nid: 1\ndata: {}\n\n`;
      const started = process.cpuUsage();
      expect(createSseParser().push(chunk)).to.have.lengthOf(1);
      // One pass takes some tens of ms; rescanning the rest of the chunk per line took seconds. Timed
      // in CPU time, which other processes on a loaded machine do not add to.
      const { user, system } = process.cpuUsage(started);
      expect((user + system) / 1_000, 'CPU ms').to.be.below(1_000);
    });
  });

  it('joins data lines, keeps the last id for later events, and takes "message" as the default name', () => {
    const parser = createSseParser();
    expect(parser.push('id: 9\ndata: one\ndata:two\n\ndata: three\n\n')).to.deep.equal([
      { event: 'message', id: '9', data: 'one\ntwo' },
      { event: 'message', id: '9', data: 'three' },
    ]);
  });

  it('dispatches nothing for comments and data-less blocks, but keeps their id and retry', () => {
    const parser = createSseParser();
    expect(parser.push(': heartbeat\n\nid: 12\nretry: 2500\n\nretry: soon\n\n')).to.deep.equal([]);
    expect(parser.lastEventId).to.equal('12');
    expect(parser.retryMs).to.equal(2_500);
  });

  describe('with a block cut before its blank line (a connection dropped mid-event)', () => {
    it('keeps the last event id of the last dispatched block, not the id the cut block named', () => {
      const parser = createSseParser();
      const dispatched = parser.push('event: unread\nid: 1\ndata: {}\n\nevent: record\nid: 2\ndata: {"a"');
      expect(dispatched).to.deep.equal([{ event: 'unread', id: '1', data: '{}' }]);
      expect(parser.lastEventId).to.equal('1');
      expect(parser.push(':1}\n\n')).to.deep.equal([{ event: 'record', id: '2', data: '{"a":1}' }]);
      expect(parser.lastEventId).to.equal('2');
    });

    it('takes the id of a block without data only at its blank line', () => {
      const parser = createSseParser();
      parser.push('id: 12\n');
      expect(parser.lastEventId).to.equal('');
      parser.push('\n');
      expect(parser.lastEventId).to.equal('12');
    });
  });

  it('ignores an id that holds a NUL and fields it does not know', () => {
    const parser = createSseParser();
    expect(parser.push('id: 1\n\nid: a\0b\nfoo: bar\ndata\n\n')).to.deep.equal([
      { event: 'message', id: '1', data: '' },
    ]);
  });

  describe('with an event that never ends (a damaged body)', () => {
    it('keeps at most MAX_EVENT_CHARS of it, then drops it and takes nothing more', () => {
      const chunk = 'x'.repeat(1024 * 1024);
      for (const start of ['data: ', 'data: a\ndata: ', '']) {
        const parser = createSseParser();
        expect(parser.push(`event: unread\nid: 1\ndata: {}\n\n${start}`)).to.have.length(1);
        let pushed = 0;
        while (!parser.overflowed && pushed <= MAX_EVENT_CHARS) {
          parser.push(start === 'data: a\ndata: ' ? `${chunk}\ndata: ` : chunk);
          pushed += chunk.length;
        }
        expect(parser.overflowed, `after ${pushed} characters`).to.equal(true);
        expect(pushed).to.be.at.most(MAX_EVENT_CHARS + chunk.length);
        expect(parser.push('\n\nevent: unread\ndata: {}\n\n')).to.deep.equal([]);
        expect(parser.lastEventId).to.equal('1');
      }
    });
  });
});
