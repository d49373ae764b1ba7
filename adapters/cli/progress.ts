/**
 * Progress of long work: a redrawn bar with rate and time left on a terminal, and a plain line every
 * few seconds otherwise, so CI logs stay readable.
 */
export function progressReporter(label: string, stream: NodeJS.WriteStream = process.stderr, unit = 'events'): (done: number, total: number) => void {
  const started = performance.now();
  let lastLine = -Infinity;
  return (done: number, total: number) => {
    const now = performance.now();
    const seconds = Math.max((now - started) / 1000, 0.001);
    const rate = done / seconds;
    const left = rate > 0 ? Math.max(total - done, 0) / rate : 0;
    const fraction = total > 0 ? Math.min(done / total, 1) : 1;
    const figures = `${done.toLocaleString('en')}/${total.toLocaleString('en')} ${unit}, ${Math.round(rate).toLocaleString('en')}/s, ${left.toFixed(1)} s left`;
    if (stream.isTTY) {
      const width = 30;
      const filled = Math.round(fraction * width);
      stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${figures}`);
      if (done >= total) stream.write('\n');
    } else if (now - lastLine >= 2000 || done >= total) {
      lastLine = now;
      stream.write(`${label}: ${(fraction * 100).toFixed(0)}% ${figures}\n`);
    }
  };
}
