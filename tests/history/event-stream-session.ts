import type { Outcome, Target } from './petstore-requests.ts';

/**
 * One connection to the event stream (Server-Sent Events), resuming after `after` with Last-Event-ID
 * (or `?after=0` at the start), held for `holdMs` and then closed. Its completion is `ok` with every
 * event received, whether the client closed it or it broke; `info` when no answer came in time, `fail`
 * on a 4xx.
 */
export async function streamSession(target: Target, after: number, holdMs: number): Promise<Outcome> {
  const controller = new AbortController();
  let closedByUs = false;
  const close = () => {
    closedByUs = true;
    controller.abort();
  };
  const connectTimer = setTimeout(close, target.timeoutMs);
  const events: unknown[] = [];
  let response: Response;
  try {
    response = await fetch(`${target.base}/events${after === 0 ? '?after=0' : ''}`, {
      headers: { authorization: `Bearer ${target.key}`, accept: 'text/event-stream', ...(after === 0 ? {} : { 'last-event-id': String(after) }) },
      signal: controller.signal,
    });
  } catch (error) {
    clearTimeout(connectTimer);
    return { type: 'info', value: { error: closedByUs ? 'timeout' : ((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name), events } };
  }
  clearTimeout(connectTimer);
  if (response.status !== 200) {
    const body = await response.text().catch(() => '');
    return { type: response.status < 500 ? 'fail' : 'info', value: { status: response.status, body: body.slice(0, 200), events } };
  }
  const holdTimer = setTimeout(close, holdMs);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let ended = 'closed';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = 'ended';
        break;
      }
      buffered += decoder.decode(value, { stream: true });
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const data = dataOf(buffered.slice(0, end));
        buffered = buffered.slice(end + 2);
        if (data !== undefined) events.push(parsed(data));
      }
    }
  } catch {
    if (!closedByUs) ended = 'broken';
  } finally {
    clearTimeout(holdTimer);
    controller.abort();
  }
  return { type: 'ok', value: { events, ended } };
}

function dataOf(block: string): string | undefined {
  const lines = block.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).replace(/^ /, ''));
  return lines.length === 0 ? undefined : lines.join('\n');
}

function parsed(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}
