export interface ErrorAnswer {
  readonly code: string;
  readonly message: string;
  readonly status: number;
}

/** Throws unless an answer is the Error shape: JSON, exactly code, message and a status equal to the HTTP one. */
export function checkErrorShape(contentType: string, bodyText: string, httpStatus: number): ErrorAnswer {
  if (!contentType.startsWith('application/json')) throw new Error(`error answer ${httpStatus} is ${JSON.stringify(contentType)}, not application/json`);
  const body = JSON.parse(bodyText) as Record<string, unknown>;
  if (Object.keys(body).sort().join() !== 'code,message,status') throw new Error(`error body has keys ${Object.keys(body).join()}`);
  if (body.status !== httpStatus) throw new Error(`error body status ${String(body.status)} differs from HTTP ${httpStatus}`);
  if (typeof body.code !== 'string' || typeof body.message !== 'string') throw new Error(`error body ${bodyText} has the wrong types`);
  return body as unknown as ErrorAnswer;
}
