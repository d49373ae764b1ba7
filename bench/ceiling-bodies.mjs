// The bodies the baselines answer with, sampled from the service before the rounds (bench/http-load.ts):
// { "gets": { "<query string>": "<base64 body>" }, "post": "<base64 body>" }. Plain JavaScript, so that
// bare node:http runs without a TypeScript loader (types: ceiling-bodies.d.mts).
import { readFileSync } from 'node:fs';

export const JSON_TYPE = 'application/json; charset=utf-8';

export function readCeilingBodies(file) {
  const bodies = JSON.parse(readFileSync(file, 'utf8'));
  return {
    gets: new Map(Object.entries(bodies.gets).map(([query, body]) => [query, Buffer.from(body, 'base64')])),
    created: Buffer.from(bodies.post, 'base64'),
  };
}
