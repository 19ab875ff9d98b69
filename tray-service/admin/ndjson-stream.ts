import { Transform } from 'node:stream';

/**
 * Objects in, NDJSON text out. Part of a `pipeline` from a database cursor to the response, so
 * backpressure reaches the cursor: when the client reads slowly, `res.write()` returns false, this
 * transform's buffer fills, and the cursor stops fetching batches.
 */
export function ndjsonStream<T>(toLine: (item: T) => unknown): Transform {
  return new Transform({
    writableObjectMode: true,
    // One item: storage pages are bounded by bytes, and one page is the read-ahead. Items can be
    // megabytes each (WEBHOOK_MAX_BODY_BYTES): 64 buffered here held 64 payloads per stalled reader.
    writableHighWaterMark: 1,
    transform(item: T, _encoding, callback) {
      callback(null, `${JSON.stringify(toLine(item))}\n`);
    },
  });
}
