/** Asks until `check` holds, for at most `withinMs`; the last answer when it never did (the caller asserts on it). */
export async function waitFor<T>(ask: () => Promise<T>, check: (answer: T) => boolean, withinMs: number, everyMs = 20): Promise<T> {
  const until = performance.now() + withinMs;
  for (;;) {
    const answer = await ask();
    if (check(answer) || performance.now() > until) return answer;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
