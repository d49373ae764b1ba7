// The load generator, a process of its own (pinned to its own core by the benchmark): runs autocannon
// for each job the benchmark sends over IPC and answers with the figures.
import autocannon from 'autocannon';

export interface LoadJob {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly connections: number;
  readonly seconds: number;
  /** Stop after this many answers, if before `seconds` pass: the same work for every target compared. */
  readonly amount?: number;
  /** Requests cycled through instead of one (paths, and bodies for POST). */
  readonly requests?: readonly { readonly method: 'GET' | 'POST'; readonly path: string; readonly body?: string }[];
  /**
   * The body of each request, in turn across every connection: `bodies.template` with `bodies.placeholder`
   * replaced by the next of `bodies.values` (an order for each available pet once). Each value is sent once: the
   * job ends when they are used up, or when its seconds pass if that comes first.
   */
  readonly bodies?: { readonly template: string; readonly placeholder: string; readonly values: readonly number[] };
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly total: number;
  readonly non2xx: number;
  readonly errors: number;
}

/** One request whose body takes the next value at each send, whichever connection sends it. */
function requestsTakingTurns({ template, placeholder, values }: NonNullable<LoadJob['bodies']>, method: LoadJob['method'], path: string): autocannon.Request[] {
  let next = 0;
  return [{ method, path, setupRequest: (request) => ({ ...request, body: template.replace(placeholder, String(values[next++])) }) }];
}

process.on('message', (job: LoadJob) => {
  const path = new URL(job.url).pathname;
  // The rate is taken over the time to the last answer: autocannon notices a finished job only at its next
  // whole-second tick, and its samples are whole seconds, while a job may end early or last under a second.
  const started = performance.now();
  let lastAnswer = started;
  const instance = autocannon({
    url: job.url,
    method: job.method,
    headers: job.headers,
    ...(job.body === undefined ? {} : { body: job.body }),
    ...(job.requests === undefined ? {} : { requests: job.requests.map((request) => ({ ...request })) }),
    ...(job.bodies === undefined ? {} : { requests: requestsTakingTurns(job.bodies, job.method, path), maxOverallRequests: job.bodies.values.length }),
    connections: job.connections,
    pipelining: 1,
    duration: job.seconds,
    ...(job.amount === undefined ? {} : { amount: job.amount }),
  }, (error, result) => {
    if (error) {
      process.send!({ error: String(error) });
      return;
    }
    const answer: LoadResult = {
      // No answer at all (a stalled target) is 0 a second, not 0/0: NaN would cross the IPC channel as null.
      requestsPerSecond: result.requests.total === 0 ? 0 : result.requests.total / ((lastAnswer - started) / 1000),
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      total: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
    };
    process.send!(answer);
  });
  instance.on('response', () => { lastAnswer = performance.now(); });
});
process.on('disconnect', () => process.exit(0));
