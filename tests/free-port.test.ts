import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { ephemeralPortRange, freePort } from '../scripts/free-port.ts';

describe('freePort (ports chosen in advance for the processes tests start)', () => {
  it('gives ports of 127.0.0.1 that can be listened on, outside the range the kernel hands out to connections', async () => {
    const [low, high] = ephemeralPortRange();
    for (let taken = 0; taken < 20; taken++) {
      const port = await freePort();
      assert.ok(port < low || port > high, `${port} lies in the ephemeral range ${low}–${high}`);
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('passes over a port something listens on', async () => {
    const listening = [];
    try {
      // Hold a few hundred chosen ports: the draws after them must avoid every one.
      const held = new Set<number>();
      for (let index = 0; index < 300; index++) {
        const port = await freePort();
        const server = createServer();
        await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
        listening.push(server);
        assert.ok(!held.has(port), `port ${port} was given while it was held`);
        held.add(port);
      }
    } finally {
      await Promise.all(listening.map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });
});
