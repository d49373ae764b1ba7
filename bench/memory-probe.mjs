// Preloaded into the service by the benchmark (`node --import ./bench/memory-probe.mjs`): watches the
// process's resident memory and, as the process exits, writes where its memory lay at the highest
// (within a MiB) to the file named by PETSTORE_BENCH_MEMORY_PROBE. Plain JavaScript: the service runs
// its bundle without a TypeScript loader.
import { writeFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapCodeStatistics, getHeapSpaceStatistics } from 'node:v8';

const file = process.env.PETSTORE_BENCH_MEMORY_PROBE;
const MIB = 1024 * 1024;
const mib = (bytes) => Number((bytes / MIB).toFixed(1));

function sample() {
  const usage = process.memoryUsage();
  return {
    rssMib: mib(usage.rss),
    heapTotalMib: mib(usage.heapTotal),
    heapUsedMib: mib(usage.heapUsed),
    // Memory held outside V8's heap by JavaScript objects: Buffers (answers, sockets' chunks), SQLite's.
    externalMib: mib(usage.external),
    arrayBuffersMib: mib(usage.arrayBuffers),
    heapSpacesMib: Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, { committed: mib(space.physical_space_size), used: mib(space.space_used_size) }])),
  };
}

// Cheap enough not to show in the service's CPU a request: the resident size alone every 50 ms, the whole
// sample only when it grew by a MiB, and the code's size (a walk of the heap) once, as the process exits.
if (file) {
  let highest = sample();
  setInterval(() => {
    if (process.memoryUsage.rss() > (highest.rssMib + 1) * MIB) highest = sample();
  }, 50).unref();
  // The collections' pauses on the event loop, by kind: what a flag that collects more often costs.
  const gcPauses = { young: 0, youngMs: 0, full: 0, fullMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const full = entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
      gcPauses[full ? 'full' : 'young'] += 1;
      gcPauses[full ? 'fullMs' : 'youngMs'] += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('exit', () => {
    const code = getHeapCodeStatistics();
    gcPauses.youngMs = Math.round(gcPauses.youngMs);
    gcPauses.fullMs = Math.round(gcPauses.fullMs);
    writeFileSync(file, JSON.stringify({ ...highest, codeAndMetadataMib: mib(code.code_and_metadata_size + code.bytecode_and_metadata_size), gcPauses }));
  });
}
