// `npm run bench:memory [-- pets ...]`: only the service's peak resident memory while it serves (the
// full benchmark measures it too), for 1k and 1M pets unless told otherwise; seeds are cached in bench/.data.
import { runServing } from './http-load.ts';

const memoryPets = process.argv.slice(2).map(Number);
if (memoryPets.some((pets) => !Number.isInteger(pets) || pets < 1)) throw new Error(`pet counts must be positive integers: ${process.argv.slice(2).join(' ')}`);
await runServing({
  memoryPets: memoryPets.length > 0 ? memoryPets : [1000, 1_000_000],
  memorySeconds: 10,
  connections: 64,
  log: (line) => process.stdout.write(`${line}\n`),
});
