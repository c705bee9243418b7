/**
 * A small Prometheus registry: counters, gauges read at scrape time, and histograms, rendered in the
 * text exposition format. Enough for this server's needs without another dependency.
 */
type Labels = Record<string, string>

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
const labelText = (labels: Labels) => {
  const entries = Object.entries(labels)
  return entries.length ? `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : ''
}
const keyOf = (labels: Labels) =>
  JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)))

/** Seconds; spans a loopback request (1 ms) to a slow store on a large document (10 s). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>()
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    const key = keyOf(labels)
    const entry = this.values.get(key)
    if (entry) entry.value += by
    else this.values.set(key, { labels, value: by })
  }
  get(labels: Labels = {}): number {
    return this.values.get(keyOf(labels))?.value ?? 0
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`]
    if (this.values.size === 0) lines.push(`${this.name} 0`)
    for (const { labels, value } of this.values.values())
      lines.push(`${this.name}${labelText(labels)} ${value}`)
    return lines.join('\n')
  }
}

export class Gauge {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number,
  ) {}
  render(): string {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} gauge`,
      `${this.name} ${this.read()}`,
    ].join('\n')
  }
}

export class Histogram {
  private readonly series = new Map<
    string,
    { labels: Labels; counts: number[]; sum: number; count: number }
  >()
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[] = LATENCY_BUCKETS,
  ) {}
  observe(labels: Labels, value: number): void {
    const key = keyOf(labels)
    let s = this.series.get(key)
    if (!s) {
      s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 }
      this.series.set(key, s)
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++
    s.sum += value
    s.count++
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`]
    for (const s of this.series.values()) {
      this.buckets.forEach((le, i) => {
        lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: String(le) })} ${s.counts[i]}`)
      })
      lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`)
      lines.push(`${this.name}_sum${labelText(s.labels)} ${s.sum}`)
      lines.push(`${this.name}_count${labelText(s.labels)} ${s.count}`)
    }
    return lines.join('\n')
  }
}

export function createMetrics() {
  const gauges: Gauge[] = []
  const metrics = {
    httpRequests: new Counter('http_requests_total', 'HTTP requests by route and status.'),
    httpLatency: new Histogram('http_request_duration_seconds', 'HTTP request latency by route.'),
    wsConnectionsOpened: new Counter(
      'collab_websocket_connections_opened_total',
      'WebSocket connections accepted.',
    ),
    authFailures: new Counter(
      'collab_auth_failures_total',
      'WebSocket connections refused by authentication.',
    ),
    documentLoads: new Counter(
      'collab_document_loads_total',
      'Documents loaded into memory from the database.',
    ),
    documentLoadsInParts: new Counter(
      'collab_document_loads_in_parts_total',
      "Large documents loaded in parts split on the documents' worker, one part a turn of the event loop.",
    ),
    stores: new Counter('collab_document_stores_total', 'Document stores that succeeded.'),
    storeFailures: new Counter(
      'collab_document_store_failures_total',
      'Document stores that failed (each is retried).',
    ),
    storeLatency: new Histogram('collab_document_store_duration_seconds', 'Time to store one document.'),
    searchRefreshLatency: new Histogram(
      'collab_search_refresh_duration_seconds',
      "Refreshes of a live document's title and search text: reading the changed blocks and writing them.",
    ),
    compactions: new Counter(
      'collab_document_compactions_total',
      'Update logs merged into their document snapshot.',
    ),
    compactionReads: new Counter(
      'collab_document_compaction_reads_total',
      "How compactions on the documents' worker read the stored parts: flat (no Y.Doc), decoded (parts that do not read flat), flat_failed (the flat reading threw, so decoded: report it), merged (a merge alone).",
    ),
    storeFaults: new Counter(
      'collab_document_store_faults_total',
      'Document stores that failed for a reason other than the database being away (content or a bug).',
    ),
    editorRefusals: new Counter(
      'collab_editor_refusals_total',
      'Editor messages refused at the boundary, by kind (content, size, document_size, document_structs, awareness).',
    ),
    editorPaced: new Counter(
      'collab_editor_paced_total',
      'Editor messages held back to pace their sender, by what was over its rate: connection (its own flood rates), user (their share across connections), sync (their share of sync answers), presence (their share of presence sent to others: the newest state waits), time (their share of the event loop spent handling their messages) or opens (connections opened past their share, held before authenticating).',
    ),
    largeSyncAnswers: new Counter(
      'collab_large_sync_answers_total',
      "Editors' sync answers of at least SYNC_ANSWER_WORKER_BYTES, by where they were made: worker (the documents' worker, from the updates the document was built from) or event_loop (Hocuspocus: the worker was busy, or the document's updates are not kept).",
    ),
    editorHeld: new Counter(
      'collab_editor_updates_held_total',
      'Editor updates held until their sync step 2 because they built on content this instance did not have yet (typing during a reconnection from an instance that died before passing its last changes on).',
    ),
    headingIdRepairs: new Counter(
      'collab_heading_id_repairs_total',
      'Heading ids the server replaced because they were malformed, missing or taken.',
    ),
    ownTextUnmarked: new Counter(
      'collab_own_text_unmarked_total',
      "Characters an editor typed inside an agent's suggestion whose suggestion mark the server ended (an editor without the web page's own-typing plugin).",
    ),
    mcpToolCalls: new Counter(
      'mcp_tool_calls_total',
      'MCP tool calls by tool and outcome (ok, refused, error, rate_limited, unavailable, cancelled).',
    ),
    mcpToolLatency: new Histogram('mcp_tool_call_duration_seconds', 'MCP tool call latency by tool.'),
    mcpWholeReads: new Counter(
      'mcp_whole_reads_total',
      "Whole-document reads by where they were made: inline (small, on the event loop), worker (the documents' worker), kept (an unchanged document's earlier read).",
    ),
    mcpSectionReads: new Counter(
      'mcp_section_reads_total',
      "Section and chapter reads (read_document with section_id) by where they were made: inline (cheap, on the event loop), worker (dense, the documents' worker), kept (an unchanged section's earlier read).",
    ),
    /** Gauges read live values (connections, loaded documents) when scraped. */
    addGauge(name: string, help: string, read: () => number) {
      gauges.push(new Gauge(name, help, read))
    },
    render(): string {
      const all = [
        metrics.httpRequests,
        metrics.httpLatency,
        metrics.wsConnectionsOpened,
        metrics.authFailures,
        metrics.documentLoads,
        metrics.documentLoadsInParts,
        metrics.stores,
        metrics.storeFailures,
        metrics.storeLatency,
        metrics.searchRefreshLatency,
        metrics.compactions,
        metrics.compactionReads,
        metrics.storeFaults,
        metrics.editorRefusals,
        metrics.editorPaced,
        metrics.editorHeld,
        metrics.largeSyncAnswers,
        metrics.headingIdRepairs,
        metrics.ownTextUnmarked,
        metrics.mcpToolCalls,
        metrics.mcpToolLatency,
        metrics.mcpWholeReads,
        metrics.mcpSectionReads,
        ...gauges,
      ]
      return `${all.map((m) => m.render()).join('\n')}\n`
    },
  }
  return metrics
}

export type Metrics = ReturnType<typeof createMetrics>
