// How many requests have reached the server, counted where every thread of the process can read
// it: an export thread compares the count with the one at its start to learn whether anyone else
// wants the server while it renders (threads.ts lowers its priority then, not before).

export class RequestArrivals {
  private readonly count: Int32Array;

  /** A new count, or the same count seen from another thread (its buffer posted there). */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)) {
    this.count = new Int32Array(buffer);
  }

  /** A request has arrived. */
  arrived(): void {
    Atomics.add(this.count, 0, 1);
  }

  /** Requests so far (wrapped to 32 bits: compare for equality only). */
  seen(): number {
    return Atomics.load(this.count, 0);
  }
}
