// A worker thread's entry when the service runs from its TypeScript sources on Node (tests, tsx):
// Node 20 loads no TypeScript in a worker by itself, so tsx is registered first. The built service
// (dist/) and Deno start the thread's module directly.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
