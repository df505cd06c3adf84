// Reads a /metrics answer with the official Prometheus client's text-format parser (Debian's
// python3-prometheus-client; `make test` installs it), so the exposition is checked by a parser
// that is not ours and not prom-client's.
import { expect } from "bun:test";

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const PARSER = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append({"family": family.name, "type": family.type, "name": s.name, "labels": s.labels, "value": s.value})
print(json.dumps(out))
`;

export function parsePrometheus(text: string): PromSample[] {
  const run = Bun.spawnSync(["/usr/bin/python3", "-c", PARSER], { stdin: Buffer.from(text), stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`the Prometheus parser refused the text: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString()) as PromSample[];
}

/** The one sample named `name` whose labels include `labels`. */
export function sampleValue(
  samples: PromSample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  expect(found.map((s) => s.labels)).toHaveLength(1);
  return (found[0] as PromSample).value;
}
