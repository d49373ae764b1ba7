/** A seed from the environment variable given (to replay a run), else a fresh one. */
export function seedFrom(variable: string): number {
  const given = process.env[variable];
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isSafeInteger(seed)) throw new Error(`${variable} must be an integer, got ${JSON.stringify(given)}`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

/** mulberry32: a small, fast generator whose whole sequence a seed replays. Values in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
