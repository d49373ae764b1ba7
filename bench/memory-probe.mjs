// Preloaded into the service by the benchmark (`node --import ./bench/memory-probe.mjs`): samples where
// the process's memory lies every 50 ms and, as the process exits, writes the sample taken at the highest
// resident memory to the file named by PETSTORE_BENCH_MEMORY_PROBE. Plain JavaScript: the service runs
// its bundle without a TypeScript loader.
import { writeFileSync } from 'node:fs';
import { getHeapCodeStatistics, getHeapSpaceStatistics } from 'node:v8';

const file = process.env.PETSTORE_BENCH_MEMORY_PROBE;
const MIB = 1024 * 1024;
const mib = (bytes) => Number((bytes / MIB).toFixed(1));

function sample() {
  const usage = process.memoryUsage();
  const code = getHeapCodeStatistics();
  return {
    rssMib: mib(usage.rss),
    heapTotalMib: mib(usage.heapTotal),
    heapUsedMib: mib(usage.heapUsed),
    // Memory held outside V8's heap by JavaScript objects: Buffers (answers, sockets' chunks), SQLite's.
    externalMib: mib(usage.external),
    arrayBuffersMib: mib(usage.arrayBuffers),
    codeAndMetadataMib: mib(code.code_and_metadata_size + code.bytecode_and_metadata_size),
    heapSpacesMib: Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, { committed: mib(space.physical_space_size), used: mib(space.space_used_size) }])),
  };
}

if (file) {
  let highest = sample();
  setInterval(() => {
    const now = sample();
    if (now.rssMib > highest.rssMib) highest = now;
  }, 50).unref();
  process.on('exit', () => writeFileSync(file, JSON.stringify(highest)));
}
