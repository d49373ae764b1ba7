// The text of the current second, kept: a command's timestamp is written once a request, and most fall in the second before.
let keptSecond = Number.NaN;
let keptPrefix = '';

/** `date.toISOString()`, exactly: the text up to the milliseconds is formatted once a second, the milliseconds each time. */
export function isoTime(date: Date): string {
  const time = date.getTime();
  const second = Math.floor(time / 1000);
  if (second !== keptSecond) {
    // Throws, as toISOString does, for an invalid date; every ISO form ends in ".mmmZ".
    keptPrefix = date.toISOString().slice(0, -4);
    keptSecond = second;
  }
  const milliseconds = time - second * 1000;
  return `${keptPrefix}${milliseconds < 10 ? '00' : milliseconds < 100 ? '0' : ''}${milliseconds}Z`;
}
