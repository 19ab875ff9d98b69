/**
 * What waits behind the message a tail's reader is taking now. A tail writes each announcement as
 * it comes; the response's buffer then holds the end of the message being sent and whole messages
 * after it. Counting the whole buffer against the reader would cut off one that keeps up as soon
 * as a single event is larger than the cap (a payload up to the receiver's body limit), or as
 * soon as another event follows a large one before it is sent: the reader would never get it. So
 * the message being sent is left out: the oldest one still (partly) waiting. A reader is behind by
 * what was written after it. Pure: told what is written, and how much still waits.
 */

/**
 * What HTTP/1.1 adds to each message written (a chunk's length line and its end), at most: the
 * waiting bytes count it, so each message is taken as that much larger. Were it counted short,
 * a message already sent could pass for the one being sent, and a large one after it for a
 * backlog.
 */
export const CHUNK_FRAMING_BYTES = 16;
export interface TailBacklog {
  /** A message of `bytes` was written. */
  wrote(bytes: number): void;
  /** The bytes written after the message being sent, when `waiting` bytes are still to be sent. */
  behind(waiting: number): number;
}

export function createTailBacklog(): TailBacklog {
  // The sizes of the messages that may still wait, oldest first, and what they add up to.
  const sizes: number[] = [];
  let total = 0;
  return {
    wrote(bytes) {
      sizes.push(bytes + CHUNK_FRAMING_BYTES);
      total += bytes + CHUNK_FRAMING_BYTES;
    },
    behind(waiting) {
      // Messages already sent whole are forgotten: what waits is the newest `waiting` bytes.
      while (sizes.length > 1 && total - (sizes[0] ?? 0) >= waiting) total -= sizes.shift() ?? 0;
      return waiting === 0 ? 0 : total - (sizes[0] ?? 0);
    },
  };
}
