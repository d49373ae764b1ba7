import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Below this, ports are left to the machine's own services. */
const LOWEST = 10_000;
const HIGHEST = 65_535;

/**
 * A port of 127.0.0.1 that nothing listened on a moment ago, for a process started (or started again)
 * on a port chosen in advance. It is drawn from outside the kernel's ephemeral range where there is
 * room: a port the kernel handed out once can be handed out again, as the local end of any connection
 * a test beside this one opens, before the process binds it.
 */
export async function freePort(): Promise<number> {
  const ranges = rangesOutsideEphemeral();
  for (let attempt = 0; attempt < 100 && ranges.length > 0; attempt++) {
    const port = await listens(randomPortIn(ranges));
    if (port !== false) return port;
  }
  return listens(0);
}

/** A port drawn evenly from `ranges` (each `[low, high]`, both included). */
function randomPortIn(ranges: readonly (readonly [number, number])[]): number {
  const count = ranges.reduce((sum, [low, high]) => sum + high - low + 1, 0);
  let index = Math.floor(Math.random() * count);
  for (const [low, high] of ranges) {
    if (index <= high - low) return low + index;
    index -= high - low + 1;
  }
  throw new Error('no port in the ranges');
}

/** The ports the kernel hands out by itself: Linux's `ip_local_port_range`, else (unreadable: not Linux, or Deno without --allow-all) its default. */
export function ephemeralPortRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // The default below.
  }
  return [32_768, 60_999];
}

/** The ports from `LOWEST` up that the kernel never hands out by itself. */
function rangesOutsideEphemeral(): [number, number][] {
  const ephemeral = ephemeralPortRange();
  const ranges: [number, number][] = [];
  if (ephemeral[0] - 1 >= LOWEST) ranges.push([LOWEST, ephemeral[0] - 1]);
  if (ephemeral[1] + 1 <= HIGHEST) ranges.push([Math.max(LOWEST, ephemeral[1] + 1), HIGHEST]);
  return ranges;
}

/** Listens on `port` of 127.0.0.1 and closes again: the port it had (0: the kernel's choice), or false when it was taken. */
function listens(port: 0): Promise<number>;
function listens(port: number): Promise<number | false>;
function listens(port: number): Promise<number | false> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => (port !== 0 && (error.code === 'EADDRINUSE' || error.code === 'EACCES') ? resolve(false) : reject(error)));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
