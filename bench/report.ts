import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FeedFigures, LiveFigures } from './event-feed.ts';
import { memoryLine } from './http-load.ts';
import type { HttpFigures, ScenarioFigures, TargetFigures } from './http-load.ts';
import type { InProcessFigures } from './in-process.ts';
import type { BackendComparison } from './postgres-vs-sqlite.ts';
import type { WebhookFigures } from './webhooks.ts';
import type { GroupFigures } from './consumer-groups.ts';
import type { PlacementFigures } from './store-orders.ts';
import { CATCH_UP_EVENTS_PER_SECOND, count, IDLE_STREAMS_MIB, LIST_RATIO_LIMIT, LIVE_P99_MS, REBUILD_EVENTS_PER_SECOND, RSS_LIMIT_MB, WEBHOOK_EVENTS_PER_SECOND, WEBHOOK_P99_MS } from './goals.ts';

export interface Goal {
  readonly name: string;
  readonly target: string;
  readonly value: string;
  readonly met: boolean;
}

export interface BenchResults {
  readonly mode: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly commit: string;
  readonly machine: Record<string, unknown>;
  readonly http: HttpFigures;
  readonly inProcess: InProcessFigures;
  /** The service on PostgreSQL beside SQLite (absent from results of before it was measured). */
  readonly backends?: BackendComparison | undefined;
  /** Absent from runs before the feed was measured. */
  readonly feed?: FeedFigures;
  /** Webhook delivery, one event at a time and in batches (absent from runs before it was measured). */
  readonly webhooks?: readonly WebhookFigures[];
  /** A consumer group of four against the feed's catch-up (absent from runs before it was measured). */
  readonly groups?: GroupFigures;
  /** Placing an order against a durable creation on the same service (absent from runs before it was measured). */
  readonly placement?: PlacementFigures;
  readonly goals: readonly Goal[];
}

/** Every goal of the benchmark, judged on one run's figures. */
export function judge(
  http: HttpFigures, inProcess: InProcessFigures, feed?: FeedFigures, backends?: BackendComparison, webhooks?: readonly WebhookFigures[], placement?: PlacementFigures,
): Goal[] {
  const goals: Goal[] = http.scenarios.map((scenario) => {
    const { ratio, ceiling } = judgedRatio(scenario);
    return { name: `${scenario.label} vs the ${ceiling}`, target: `≥ ${scenario.goal}×`, value: `${ratio.toFixed(2)}×`, met: ratio >= scenario.goal };
  });
  for (const scenario of http.scenarios) {
    if (scenario.p99GoalMs === undefined) continue;
    goals.push({
      name: `${scenario.label} p99 at ${http.connections} connections`,
      target: `< ${scenario.p99GoalMs} ms`,
      value: `${scenario.service.latencyP99Ms} ms`,
      met: scenario.service.latencyP99Ms < scenario.p99GoalMs,
    });
  }
  for (const scenario of backends?.scenarios ?? []) {
    goals.push({
      name: `${scenario.label} on PostgreSQL vs SQLite`,
      target: `≥ ${scenario.goal}×`,
      value: `${scenario.ratio.toFixed(2)}×`,
      met: scenario.ratio >= scenario.goal,
    });
  }
  goals.push({
    name: `listPets at ${count(inProcess.listPets.largePets)} vs ${count(inProcess.listPets.smallPets)} pets (worst of ${inProcess.listPets.cases.length} cases)`,
    target: `≤ ${LIST_RATIO_LIMIT}×`,
    value: `${inProcess.listPets.worstRatio.toFixed(2)}×`,
    met: inProcess.listPets.worstRatio <= LIST_RATIO_LIMIT,
  });
  goals.push({
    name: `projection rebuild (${count(inProcess.rebuild.events)} events)`,
    target: `≥ ${count(REBUILD_EVENTS_PER_SECOND)} events/s`,
    value: `${count(Math.round(inProcess.rebuild.eventsPerSecond))} events/s`,
    met: inProcess.rebuild.eventsPerSecond >= REBUILD_EVENTS_PER_SECOND,
  });
  if (http.peakRssMib !== undefined) {
    const { bare, ceiling } = http.peakRssMib;
    goals.push({
      name: `peak RSS of the service over the side-by-side rounds (${count(http.pets)} pets; node:http ${bare?.toFixed(0)} MiB, Koa ${ceiling?.toFixed(0)} MiB)`,
      target: `≤ ${RSS_LIMIT_MB} MiB`,
      value: `${http.servicePeakRssMb.toFixed(0)} MiB`,
      met: http.servicePeakRssMb <= RSS_LIMIT_MB,
    });
  }
  const largest = http.serving.at(-1);
  if (largest) {
    const smallest = http.serving[0]!;
    goals.push({
      name: `peak RSS serving ${count(largest.pets)} pets` + (smallest === largest ? '' : ` (${smallest.peakRssMb.toFixed(0)} MiB with ${count(smallest.pets)})`),
      target: `≤ ${RSS_LIMIT_MB} MiB`,
      value: `${largest.peakRssMb.toFixed(0)} MiB`,
      met: largest.peakRssMb <= RSS_LIMIT_MB,
    });
  }
  if (placement) {
    goals.push({
      name: 'POST /v1/store/orders (an order and its pet, one commit) vs POST /v1/pets (durable), same service and rounds',
      target: `≥ ${placement.goal}×`,
      value: `${placement.ratio.toFixed(2)}×`,
      met: placement.ratio >= placement.goal,
    });
  }
  if (feed) goals.push(...feedGoals(feed));
  for (const figures of webhooks ?? []) goals.push(...webhookGoals(figures));
  return goals;
}

function webhookGoals(figures: WebhookFigures): Goal[] {
  const delivered = figures.batchSize === 1 ? 'one event a request' : `batches of up to ${figures.batchSize}`;
  return [
    {
      name: `webhooks: a backlog of ${count(figures.backlogEvents)} events to one fast receiver, ${delivered}`,
      target: `≥ ${count(WEBHOOK_EVENTS_PER_SECOND)} events/s`,
      value: `${rps(figures.backlogEventsPerSecond)} events/s`,
      met: figures.backlogEventsPerSecond >= WEBHOOK_EVENTS_PER_SECOND,
    },
    {
      name: `webhooks: 201 to delivery, ${count(figures.liveWrites)} creations at about 200/s, ${delivered} (p50 ${figures.p50Ms.toFixed(2)} ms)`,
      target: `p99 ≤ ${WEBHOOK_P99_MS} ms`,
      value: `${figures.p99Ms.toFixed(2)} ms`,
      met: figures.p99Ms <= WEBHOOK_P99_MS,
    },
  ];
}

function feedGoals({ catchUp, live, idle }: FeedFigures): Goal[] {
  const latency = (where: string, figures: LiveFigures, limit: number): Goal => ({
    name: `event feed: 201 to the event on an open stream, ${where}, ${count(figures.writes)} creations at ${rps(figures.writesPerSecond)}/s (p50 ${figures.p50Ms.toFixed(2)} ms)`,
    target: `p99 ≤ ${limit} ms`,
    value: `${figures.p99Ms.toFixed(2)} ms`,
    met: figures.p99Ms <= limit,
  });
  return [
    {
      name: `event feed: catch-up to one consumer (${count(catchUp.events)} events, median of ${catchUp.rounds.length}; ${catchUp.cpuPerEventUs.toFixed(2)} µs of the service's CPU an event)`,
      target: `≥ ${count(CATCH_UP_EVENTS_PER_SECOND)} events/s`,
      value: `${rps(catchUp.eventsPerSecond)} events/s`,
      met: catchUp.eventsPerSecond >= CATCH_UP_EVENTS_PER_SECOND,
    },
    latency('SQLite', live.sqlite, LIVE_P99_MS.sqlite),
    ...(live.postgres ? [latency('PostgreSQL, written through one instance and streamed from another', live.postgres, LIVE_P99_MS.postgres)] : []),
    {
      name: `event feed: ${count(idle.streams)} open idle streams over the idle service (${idle.serviceMib.toFixed(0)} MB)`,
      target: `< ${IDLE_STREAMS_MIB} MB`,
      value: `${idle.addedMib.toFixed(1)} MB`,
      met: idle.addedMib < IDLE_STREAMS_MIB,
    },
  ];
}

/** The ratio a scenario's goal judges, and what it is against: bare node:http, the Koa ceiling or a durable ceiling. */
function judgedRatio(scenario: ScenarioFigures): { ratio: number; ceiling: string } {
  const against = {
    node: { ratio: scenario.bareRatio, ceiling: 'bare node:http' },
    ceiling: { ratio: scenario.ratio, ceiling: 'Koa ceiling' },
    durable: { ratio: scenario.durableRatio, ceiling: 'durable ceiling' },
    'event-sourced': { ratio: scenario.eventSourcedRatio, ceiling: 'event-sourced durable ceiling' },
  }[scenario.against ?? 'ceiling'];
  if (against.ratio === undefined) throw new Error(`${scenario.label}: no figures of the ${against.ceiling} to judge it against`);
  return { ratio: against.ratio, ceiling: against.ceiling };
}

const rps = (value: number) => Math.round(value).toLocaleString('en-US');
const us = (value: number) => `${value.toFixed(0)} µs`;
/** Results written before the event loop's part was measured have none. */
const loopShare = (figures: { loopCpuPerRequestUs?: number }) => (figures.loopCpuPerRequestUs === undefined ? '–' : us(figures.loopCpuPerRequestUs));
const micro = (ns: number) => `${(ns / 1000).toFixed(2)} µs`;
/** A ratio, in bold when a goal judges it. */
const bold = (ratio: number | undefined, judged: boolean) => (ratio === undefined ? '–' : judged ? `**${ratio.toFixed(2)}×**` : `${ratio.toFixed(2)}×`);

/** The servers' peak resident memory over the rounds, and where the service's lay at its peak. */
function memorySentences(http: HttpFigures): string[] {
  if (http.peakRssMib === undefined) return [];
  const { service, bare, ceiling } = http.peakRssMib;
  const lines = [
    `Peak resident memory (VmHWM) over these rounds: the service ${service?.toFixed(0)} MiB, bare node:http ${bare?.toFixed(0)} MiB, the Koa ceiling ${ceiling?.toFixed(0)} MiB` +
      ' (node:http runs plain JavaScript, Koa under the tsx loader, the service its bundle).' +
      (http.serviceMemory ? ` Where the service's lay at its peak: ${memoryLine(http.serviceMemory)}.` : ''),
    '',
  ];
  for (const serving of http.serving) {
    if (serving.memory) lines.push(`Serving ${count(serving.pets)} pets (${count(serving.distinctListings)} different listings, a creation in ten), at its peak: ${memoryLine(serving.memory)}.`, '');
  }
  return lines;
}

/** The tables as Markdown: printed after a run and shown in docs/performance.md. */
export function markdownTables(results: BenchResults): string {
  const { http, inProcess } = results;
  const lines = [
    `Run \`${results.mode}\` of ${results.finishedAt.slice(0, 10)}, commit \`${results.commit}\`, ${String(results.machine.cpuModel)} (${String(results.machine.cores)} cores), Node ${String(results.machine.node)}; ` +
      `${count(http.pets)} pets, ${http.connections} connections, ${http.rounds} rounds of ${http.seconds} s, ${http.pinned ? 'servers on core 0 and the load generator on core 1' : 'not pinned'}.`,
    '',
    '| scenario | service req/s | bare node:http req/s | ratio | Koa ceiling req/s | ratio | goal | p99 service / node:http / Koa | CPU a request service / node:http / Koa | of it on the event loop (service) | body |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...http.scenarios.map((scenario) => {
      const bare = scenario.bare;
      const judged = scenario.against === 'node' || scenario.against === 'ceiling' || scenario.against === undefined;
      return `| \`${scenario.label}\` | ${rps(scenario.service.median)} | ${bare ? rps(bare.median) : '–'} | ${bold(scenario.bareRatio, scenario.against === 'node')} | ` +
        `${rps(scenario.ceiling.median)} | ${bold(scenario.ratio, scenario.against === 'ceiling' || scenario.against === undefined)} | ${judged ? `≥ ${scenario.goal}×` : '–'} | ` +
        `${scenario.service.latencyP99Ms} / ${bare?.latencyP99Ms ?? '–'} / ${scenario.ceiling.latencyP99Ms} ms | ` +
        `${us(scenario.service.cpuPerRequestUs)} / ${bare ? us(bare.cpuPerRequestUs) : '–'} / ${us(scenario.ceiling.cpuPerRequestUs)} | ${loopShare(scenario.service)} | ${scenario.bodyBytes} B |`;
    }),
    '',
    ...memorySentences(http),
    ...durableTable(http),
    ...backendTables(results.backends),
    '| goal | target | measured | met |',
    '|---|---:|---:|:---:|',
    ...results.goals.map((goal) => `| ${goal.name} | ${goal.target} | ${goal.value} | ${goal.met ? 'yes' : '**no**'} |`),
    '',
    `In process: a cached listing answer costs ${micro(inProcess.cachedAnswerNs)} (freshness check and lookup); ` +
      inProcess.serialisation.map((each) => `JSON.stringify of ${each.pets} pets ${micro(each.stringifyNs)}`).join(', ') + '; ' +
      'durable on this disk, in groups of ' + inProcess.appends.map((each) => each.groupSize).join(' / ') + ': ' +
      inProcess.appends.map((each) => rps(each.appendsPerSecond)).join(' / ') + ' appends/s, ' +
      inProcess.appends.map((each) => rps(each.creationsPerSecond)).join(' / ') + ' creations/s through `addPet` (an id and an append); one commit a group.',
    '',
    '| `listPets` | limit | ' + `${count(inProcess.listPets.smallPets)} pets | ${count(inProcess.listPets.largePets)} pets | ratio |`,
    '|---|---:|---:|---:|---:|',
    ...inProcess.listPets.cases.map((figure) => `| ${figure.status} | ${figure.limit} | ${micro(figure.smallNs)} | ${micro(figure.largeNs)} | ${figure.ratio.toFixed(2)}× |`),
    ...(results.groups ? ['', groupSentence(results.groups)] : []),
    ...(results.placement ? ['', placementSentence(results.placement)] : []),
  ];
  return lines.join('\n');
}

/** A consumer group's throughput beside the feed's catch-up, measured in the same rounds. */
function groupSentence(groups: GroupFigures): string {
  const on = (backend: string, figures: Omit<GroupFigures, 'postgres'>) => {
    const database = figures.group.databaseCpuPerEventUs === undefined ? '' : ` and ${figures.group.databaseCpuPerEventUs.toFixed(1)} µs of PostgreSQL's`;
    const large = figures.largeClaims;
    return `on ${backend} ${rps(figures.group.eventsPerSecond)} events/s (${figures.group.cpuPerEventUs.toFixed(1)} µs of the service's CPU an event${database}), against the feed's catch-up of the same log at ` +
      `${rps(figures.feed.eventsPerSecond)} events/s (${figures.feed.cpuPerEventUs.toFixed(2)} µs): ${figures.ratio.toFixed(3)}×` +
      (large ? `; with claims of up to ${rps(large.claimMax)}, ${rps(large.eventsPerSecond)} events/s (${large.cpuPerEventUs.toFixed(1)} µs an event): ${large.ratio.toFixed(3)}×` : '');
  };
  return `Consumer groups: ${count(groups.events)} events through a group of ${groups.consumers} consumers over HTTP (claims of up to 100, every event acked, ` +
    `every claim and ack durable before it is answered): ${on('SQLite', groups)}${groups.postgres ? `; ${on('PostgreSQL', groups.postgres)}` : ''}; ` +
    `medians of ${groups.group.rounds.length} alternating rounds.`;
}

/** Placing an order beside a durable creation, on the same service in the same alternating rounds. */
function placementSentence(placement: PlacementFigures): string {
  const { creation, placement: placed } = placement;
  return `Store orders: \`POST /v1/store/orders\` (the order and its pet, two streams in one commit; each for another available pet of ${count(placement.pets)}) at ` +
    `${rps(placed.median)} req/s (${us(placed.cpuPerRequestUs)} of the service's CPU a request, p99 ${placed.latencyP99Ms} ms), against \`POST /v1/pets\` (durable) on the same service at ` +
    `${rps(creation.median)} req/s (${us(creation.cpuPerRequestUs)}, p99 ${creation.latencyP99Ms} ms): ${placement.ratio.toFixed(2)}×, medians of ${creation.rounds.length} alternating rounds at ${placement.connections} connections.`;
}

/** Durable writes against the durable ceiling (Koa, and each turn's creations committed to a SQLite file before their 201s). */
function durableTable(http: HttpFigures): string[] {
  const durable = http.scenarios.filter((scenario) => scenario.durableCeiling !== undefined);
  if (durable.length === 0) return [];
  return [
    'Against the durable ceilings: the same Koa stack, whose `POST` also commits before its 201, the POSTs of one event-loop turn in one transaction ' +
      '(WAL, `synchronous=FULL`), on the same core and disk, in the same alternating rounds. The durable ceiling writes one row a pet into a one-table file; ' +
      'the event-sourced durable ceiling writes what a creation must write at least into a copy of the service\'s database: the pet\'s row under its status index ' +
      'and its `PetAdded` event under the unique (stream, version) index, the id and the log position from SQLite\'s rowids, nothing read first.',
    '',
    '| scenario | ceiling | service req/s | ceiling req/s | ratio | goal | p99 service / ceiling | CPU a request service / ceiling | of it on the event loop |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...durable.flatMap((scenario) => [
      { name: 'durable (one row)', figures: scenario.durableCeiling!, ratio: scenario.durableRatio!, judged: scenario.against === 'durable' },
      ...(scenario.eventSourcedCeiling ? [{ name: 'event-sourced durable', figures: scenario.eventSourcedCeiling, ratio: scenario.eventSourcedRatio!, judged: scenario.against === 'event-sourced' }] : []),
    ].map(({ name, figures, ratio, judged }: { name: string; figures: TargetFigures; ratio: number; judged: boolean }) =>
      `| \`${scenario.label}\` | ${name} | ${rps(scenario.service.median)} | ${rps(figures.median)} | ${bold(ratio, judged)} | ${judged ? `≥ ${scenario.goal}×` : '–'} | ` +
      `${scenario.service.latencyP99Ms} / ${figures.latencyP99Ms} ms | ${us(scenario.service.cpuPerRequestUs)} / ${us(figures.cpuPerRequestUs)} | ${loopShare(scenario.service)} / ${loopShare(figures)} |`)),
    '',
  ];
}

/** The service on PostgreSQL beside SQLite: req/s, p99 and CPU time a request on each side. */
function backendTables(backends: BackendComparison | undefined): string[] {
  if (backends === undefined) return [];
  return [
    `The same service on PostgreSQL (a throwaway cluster, fsync and \`synchronous_commit\` on, ${backends.pinned ? 'on core 0 with the service' : 'not pinned'}) beside SQLite: ` +
      `${count(backends.pets)} pets, ${backends.connections} connections, ${backends.rounds} rounds of ${backends.seconds} s alternating which goes first; CPU a request: the service's, and PostgreSQL's server processes' after the +.`,
    '',
    '| scenario | SQLite req/s | PostgreSQL req/s | ratio | goal | p99 SQLite / PostgreSQL | CPU a request SQLite | CPU a request PostgreSQL |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...backends.scenarios.map((scenario) =>
      `| \`${scenario.label}\` | ${rps(scenario.sqlite.median)} | ${rps(scenario.postgres.median)} | **${scenario.ratio.toFixed(2)}×** | ≥ ${scenario.goal}× | ` +
      `${scenario.sqlite.latencyP99Ms} / ${scenario.postgres.latencyP99Ms} ms | ${us(scenario.sqlite.cpuPerRequestUs)} | ${us(scenario.postgres.cpuPerRequestUs)} + ${us(scenario.postgres.databaseCpuPerRequestUs)} |`),
    '',
  ];
}

/** The bars of each scenario in the chart, in order: the service, then its baselines. */
const CHART_SERIES = [
  { name: 'petstore (key, request log, SQLite)', colour: '#2f6fdf', figures: (scenario: ScenarioFigures) => scenario.service },
  { name: 'bare node:http, precomputed bodies', colour: '#d9d9d9', figures: (scenario: ScenarioFigures) => scenario.bare },
  { name: 'Koa 3 + @koa/router, precomputed bodies', colour: '#aaaaaa', figures: (scenario: ScenarioFigures) => scenario.ceiling },
  { name: 'Koa committing one row a pet (durable ceiling)', colour: '#777777', figures: (scenario: ScenarioFigures) => scenario.durableCeiling },
  { name: 'Koa committing a creation\'s event and pet rows (event-sourced durable ceiling)', colour: '#444444', figures: (scenario: ScenarioFigures) => scenario.eventSourcedCeiling },
] as const;

/**
 * Two panels of grouped bars, a group a scenario: requests a second (the judged ratio above each group)
 * and the server's CPU time a request, the service beside bare node:http, Koa and the durable ceilings.
 */
export function chartSvg(results: BenchResults): string {
  const scenarios = results.http.scenarios;
  const series = CHART_SERIES.filter((each) => scenarios.some((scenario) => each.figures(scenario) !== undefined));
  const left = 70;
  const groupWidth = Math.max(250, 36 * series.length + 40);
  const width = left + 20 + groupWidth * scenarios.length;
  const barWidth = Math.min(34, (groupWidth - 30) / series.length);
  const panelHeight = 230;
  const panels = [
    { title: `requests a second (median of ${results.http.rounds} rounds, ${results.http.connections} connections, ${count(results.http.pets)} pets)`, value: (figures: TargetFigures) => figures.median, format: rps, ratios: true },
    { title: 'CPU a request (µs, user + system, the server\'s process)', value: (figures: TargetFigures) => figures.cpuPerRequestUs, format: (value: number) => value.toFixed(0), ratios: false },
  ];
  const legendTop = 40 + panels.length * (panelHeight + 40);
  const height = legendTop + 18 * series.length + 10;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">petstore beside bare node:http, Koa and the durable ceilings (run ${escapeXml(results.mode)}, commit ${escapeXml(results.commit)})</text>`,
  ];
  panels.forEach((panel, panelIndex) => {
    const top = 40 + panelIndex * (panelHeight + 40) + 40;
    const bottom = top + panelHeight - 60;
    const highest = Math.max(1, ...scenarios.flatMap((scenario) => series.map((each) => { const figures = each.figures(scenario); return figures ? panel.value(figures) : 0; })));
    const scale = niceCeiling(highest);
    const y = (value: number) => bottom - ((bottom - top) * value) / scale;
    parts.push(`<text x="${left}" y="${top - 36}" font-weight="bold">${escapeXml(panel.title)}</text>`);
    for (let step = 0; step <= 4; step++) {
      const value = (scale * step) / 4;
      parts.push(`<line x1="${left}" x2="${width - 20}" y1="${y(value)}" y2="${y(value)}" stroke="#ddd"/>`);
      parts.push(`<text x="${left - 8}" y="${y(value) + 4}" text-anchor="end">${panel.format(value)}</text>`);
    }
    scenarios.forEach((scenario, index) => {
      const start = left + groupWidth * index + 15;
      const bars = series.flatMap((each) => { const figures = each.figures(scenario); return figures ? [{ value: panel.value(figures), colour: each.colour }] : []; });
      const offset = (groupWidth - 30 - bars.length * barWidth) / 2;
      bars.forEach((bar, barIndex) => {
        const x = start + offset + barIndex * barWidth;
        parts.push(`<rect x="${x.toFixed(1)}" y="${y(bar.value).toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${(bottom - y(bar.value)).toFixed(1)}" fill="${bar.colour}" stroke="#555" stroke-width="0.5"/>`);
        parts.push(`<text x="${(x + barWidth / 2).toFixed(1)}" y="${(y(bar.value) - 4).toFixed(1)}" text-anchor="middle" font-size="9">${panel.format(bar.value)}</text>`);
      });
      const centre = left + groupWidth * index + groupWidth / 2;
      if (panel.ratios) {
        const { ratio, ceiling } = judgedRatio(scenario);
        const met = ratio >= scenario.goal;
        const colour = met ? '#1a7f37' : '#c62828';
        parts.push(`<text x="${centre}" y="${top - 20}" text-anchor="middle" font-weight="bold" fill="${colour}">${ratio.toFixed(2)}× (goal ${scenario.goal}×)</text>`);
        parts.push(`<text x="${centre}" y="${top - 7}" text-anchor="middle" font-size="11" fill="${colour}">of ${escapeXml(ceiling)}</text>`);
      }
      parts.push(`<text x="${centre}" y="${bottom + 16}" text-anchor="middle" font-size="11">${escapeXml(scenario.label)}</text>`);
    });
  });
  series.forEach((each, index) => {
    const yTop = legendTop + 18 * index;
    parts.push(`<rect x="${left}" y="${yTop}" width="12" height="12" fill="${each.colour}" stroke="#555" stroke-width="0.5"/><text x="${left + 18}" y="${yTop + 10}">${escapeXml(each.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function niceCeiling(value: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The page that shows the figures: the block between the markers is rendered from latest.json, the rest is written by hand. */
export const PERFORMANCE_PAGE = 'docs/performance.md';
export const RESULTS_START = '<!-- bench:results:start -->';
export const RESULTS_END = '<!-- bench:results:end -->';

/** The page with the block between the markers replaced by `tables`. */
export function withResults(page: string, tables: string): string {
  const start = page.indexOf(RESULTS_START);
  const end = page.indexOf(RESULTS_END);
  if (start < 0 || end < start) throw new Error(`${PERFORMANCE_PAGE} has no ${RESULTS_START} … ${RESULTS_END} block`);
  return `${page.slice(0, start + RESULTS_START.length)}\n${tables}\n${page.slice(end)}`;
}

/** Renders the figures of `results` into the performance page under `root`. */
export function writePerformancePage(root: string, results: BenchResults): void {
  const path = join(root, PERFORMANCE_PAGE);
  writeFileSync(path, withResults(readFileSync(path, 'utf8'), markdownTables(results)));
}
