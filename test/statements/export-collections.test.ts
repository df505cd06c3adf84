// lanes: sqlite
// The full collection after large exports is paced: at most one per interval, the next one
// scheduled once for when the interval is over, however many exports end meanwhile.
import { describe, expect, test } from "bun:test";
import { CollectionPacer } from "../../src/statements/export/collections";

function pacer() {
  let now = 1_000;
  const collections: number[] = [];
  const timers: { at: number; run: () => void }[] = [];
  const p = new CollectionPacer({
    collect: () => collections.push(now),
    now: () => now,
    later: (run, ms) => timers.push({ at: now + ms, run }),
    everyMs: 30_000,
  });
  const advanceTo = (t: number) => {
    now = t;
    const due = timers.filter((x) => x.at <= t);
    timers.splice(0, timers.length, ...timers.filter((x) => x.at > t));
    for (const timer of due) timer.run();
  };
  return { p, collections, timers, advanceTo };
}

describe("the collection after large exports", () => {
  test("the first export's end collects at once", () => {
    const { p, collections, timers } = pacer();
    p.exportEnded();
    expect(collections).toEqual([1_000]);
    expect(timers).toHaveLength(0);
  });

  test("exports ending within the interval get one collection, when the interval is over", () => {
    const { p, collections, timers, advanceTo } = pacer();
    p.exportEnded();
    advanceTo(5_000);
    p.exportEnded();
    advanceTo(12_000);
    p.exportEnded();
    p.exportEnded();
    expect(collections).toEqual([1_000]);
    expect(timers.map((t) => t.at)).toEqual([31_000]);
    advanceTo(31_000);
    expect(collections).toEqual([1_000, 31_000]);
    // The interval counts from that collection on.
    advanceTo(40_000);
    p.exportEnded();
    expect(collections).toEqual([1_000, 31_000]);
    expect(timers.map((t) => t.at)).toEqual([61_000]);
  });

  test("an export ending after a quiet interval collects at once again", () => {
    const { p, collections, advanceTo } = pacer();
    p.exportEnded();
    advanceTo(31_001);
    p.exportEnded();
    expect(collections).toEqual([1_000, 31_001]);
  });
});
