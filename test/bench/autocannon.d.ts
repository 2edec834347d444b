// Types for the parts of autocannon 8's programmatic API the benchmark uses (it ships none); they
// follow its README ("API", "Results").

declare module "autocannon" {
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }

  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called before every request when present; returns the request to send. */
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
    /** Called with every response of this request: its status and body. */
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Stop after this many requests instead of after `duration`. */
    amount?: number;
    /** Requests per second across all connections (a fixed rate); latencies are corrected for coordinated omission. */
    overallRate?: number;
    /** Seconds to wait for each response. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: Request[];
    title?: string;
  }

  export interface Result {
    title?: string;
    url: string;
    /** Requests per second, sampled each second. */
    requests: Histogram & { sent: number };
    /** Milliseconds. */
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends Promise<Result> {
    stop(): void;
  }

  export default function autocannon(options: Options): Instance;
}
