import { Writable } from 'node:stream';
import { pino } from 'pino';

/** A logger whose messages (the `msg` of each line) and whole lines the test reads. */
export function recordingLogger() {
  const messages: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const line = JSON.parse(chunk.toString()) as Record<string, unknown>;
      lines.push(line);
      messages.push(String(line.msg));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), messages, lines };
}
