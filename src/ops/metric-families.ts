// Counters and histograms that cost a few nanoseconds on the request path: a labelled cell is
// found once per label combination and then incremented in place. prom-client's own metrics
// validate and hash their labels on every increment, which was a measurable part of an agent
// call; here prom-client's registry only renders these families when /metrics is scraped.

type Labels = Record<string, string>;

interface Rendered {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: { labels: Labels; value: number; metricName?: string }[];
}

abstract class Family<Cell> {
  private readonly cells = new Map<string, { labels: Labels; cell: Cell }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
  ) {}

  /** The cell of one label combination; `key` must identify `values` (they are read only once). */
  cell(key: string, values: readonly string[]): Cell {
    let entry = this.cells.get(key);
    if (!entry) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => {
        labels[name] = values[i] ?? "";
      });
      entry = { labels, cell: this.newCell() };
      this.cells.set(key, entry);
    }
    return entry.cell;
  }

  protected abstract newCell(): Cell;
  protected abstract render(labels: Labels, cell: Cell): Rendered["values"];

  /** What prom-client's registry asks a metric for when it renders the text format. */
  async get(): Promise<Rendered> {
    const values: Rendered["values"] = [];
    for (const { labels, cell } of this.cells.values()) values.push(...this.render(labels, cell));
    return { name: this.name, help: this.help, type: this.type, aggregator: "sum", values };
  }

  abstract readonly type: Rendered["type"];

  reset(): void {
    this.cells.clear();
  }
}

export class CounterFamily extends Family<{ value: number }> {
  readonly type = "counter";
  protected newCell() {
    return { value: 0 };
  }
  protected render(labels: Labels, cell: { value: number }) {
    return [{ labels, value: cell.value }];
  }
}

class HistogramCell {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        this.counts[i] = (this.counts[i] as number) + 1;
        return;
      }
    }
  }
}

export class HistogramFamily extends Family<HistogramCell> {
  readonly type = "histogram";

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  protected newCell() {
    return new HistogramCell(this.bounds);
  }

  protected render(labels: Labels, cell: HistogramCell) {
    const out: Rendered["values"] = [];
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += cell.counts[i] as number;
      out.push({
        metricName: `${this.name}_bucket`,
        labels: { ...labels, le: String(bound) },
        value: cumulative,
      });
    });
    out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: "+Inf" }, value: cell.count });
    out.push({ metricName: `${this.name}_sum`, labels, value: cell.sum });
    out.push({ metricName: `${this.name}_count`, labels, value: cell.count });
    return out;
  }
}
