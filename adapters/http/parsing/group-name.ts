import { GROUP_NAME_PATTERN } from '../../../contract/consumer-groups.ts';
import { HttpProblem } from '../pipeline/errors.ts';

const GROUP_NAME = new RegExp(GROUP_NAME_PATTERN);

/** A path's consumer group name: 1 to 64 of a-z, 0-9 and -; anything else is a malformed path (400). */
export function parseGroupName(text: string): string {
  if (!GROUP_NAME.test(text)) throw new HttpProblem('invalid_path', `a group name is 1 to 64 of a-z, 0-9 and -, got ${JSON.stringify(text)}`);
  return text;
}
