// What the export thread tests of both stores share: every format rendered by the threads and
// in the server's thread, compared byte for byte, and waiting for the threads to end.
import { expect } from "bun:test";
import { type ExportFormat, exportStatement } from "../../src/statements/export";
import type { ExportThreads } from "../../src/statements/export/threads";
import type { StatementRow } from "../../src/statements/queries";
import type { TestApp } from "../helpers/app";

const ACCOUNT = { accountNumber: "40702810900000000001", alias: "main" };
const CREATED = { date: "2026-11-20", time: "12:00:00" };

/** Export threads still running once those ending have ended (waits up to 5 s). */
export async function settled(threads: ExportThreads): Promise<number> {
  for (let i = 0; i < 500 && threads.runningThreads > 0; i++) await Bun.sleep(10);
  return threads.runningThreads;
}

const bytesOf = async (body: ReadableStream<Uint8Array>) =>
  Buffer.from(await new Response(body).arrayBuffer());

/** Every format of `row` from `threads` threads is byte for byte what the server's thread renders. */
export async function expectThreadsRenderTheSame(
  t: TestApp,
  row: StatementRow,
  threads: number,
): Promise<void> {
  const reads = t.services.exportQueries;
  const exportThreads = t.services.exportThreads;
  const cases: [ExportFormat, "1.02" | "1.03"][] = [
    ["json", "1.03"],
    ["csv", "1.03"],
    ["1c", "1.02"],
    ["1c", "1.03"],
  ];
  for (const [format, version] of cases) {
    const here = exportStatement(reads, row, ACCOUNT, format, { version, created: CREATED });
    let used = 0;
    const there = exportStatement(reads, row, ACCOUNT, format, {
      version,
      created: CREATED,
      pages: (job, pages, operations) => {
        const source = exportThreads.source(job, pages, operations);
        if (source) used = exportThreads.runningThreads;
        return source;
      },
    });
    expect(used).toBe(threads);
    const [a, b] = [await bytesOf(here.body), await bytesOf(there.body)];
    expect(b.length).toBeGreaterThan(100_000);
    expect(b.equals(a)).toBe(true);
    expect(await settled(exportThreads)).toBe(0);
  }
}
