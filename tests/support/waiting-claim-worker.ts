/**
 * A worker that makes one claim waiting 30 s (the most a claim waits) and prints what it was handed: run as a child process
 * (origin, key, group, consumer as arguments) that a test stops while its claim waits.
 */
const [origin, key, group, consumer] = process.argv.slice(2) as [string, string, string, string];
const answer = await fetch(`${origin}/v1/consumer-groups/${group}/claims`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ consumer, waitMs: 30_000 }),
});
process.stdout.write(`${answer.status} ${await answer.text()}\n`);
