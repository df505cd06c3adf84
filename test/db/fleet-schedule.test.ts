// lanes: postgres
// Jobs once per interval for the whole fleet: of several replicas asking at once one wins the
// interval, on both stores; through the session sweeper on PostgreSQL two replicas' timers sweep
// once per interval between them.
import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/logger";
import { FleetSchedule } from "../../src/db/fleet-schedule";
import type { SessionManager } from "../../src/mcp/sessions";
import { SessionSweeper } from "../../src/mcp/sessions";
import { twoStores, until } from "../helpers/pg";

const { ports, pgPort } = twoStores();
const logger = createLogger("error");
const sweepers: SessionSweeper[] = [];
afterEach(async () => {
  for (const s of sweepers.splice(0)) await s.stop();
});

describe("fleet schedule", () => {
  test("one claim per interval, on both stores", () => {
    const [onSqlite, onPostgres] = ports.map((port) => {
      const clock = new ManualClock("2026-11-20T09:00:00Z");
      const a = new FleetSchedule(port, clock, logger);
      const b = new FleetSchedule(port, clock, logger);
      const first = [a.claim("sweep", 60_000), b.claim("sweep", 60_000), a.claim("other", 60_000)];
      clock.advance(59_999);
      const early = b.claim("sweep", 60_000);
      clock.advance(1);
      const next = [b.claim("sweep", 60_000), a.claim("sweep", 60_000)];
      return { first, early, next };
    });
    expect(onPostgres).toEqual(onSqlite!);
    expect(onSqlite).toEqual({ first: [true, false, true], early: false, next: [true, false] });
  });

  test("PostgreSQL: two replicas' session sweepers sweep once per interval between them", async () => {
    const clock = new ManualClock("2026-11-20T09:00:00Z");
    let sweeps = 0;
    const sessions = { sweep: async () => ++sweeps } as unknown as SessionManager;
    for (const port of [pgPort(), pgPort()]) {
      const sweeper = new SessionSweeper(sessions, 20, logger, new FleetSchedule(port, clock, logger));
      sweepers.push(sweeper);
      sweeper.start();
    }
    await until(() => sweeps === 1);
    await Bun.sleep(100); // several more ticks of both timers: the interval (by svc's clock) is taken
    expect(sweeps).toBe(1);
    clock.advance(20);
    await until(() => sweeps === 2);
    await Bun.sleep(100);
    expect(sweeps).toBe(2);
  });
});
