import { Writable } from 'node:stream';
import { pino } from 'pino';

/** A logger whose messages (the `msg` of each line) the test reads. */
export function recordingLogger() {
  const messages: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      messages.push(String((JSON.parse(chunk.toString()) as { msg: string }).msg));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), messages };
}
