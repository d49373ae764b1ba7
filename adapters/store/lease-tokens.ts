import { randomFillSync } from 'node:crypto';

const TOKEN_BYTES = 12;
/** Random bytes drawn a page at a time: one draw from the system costs as much as hundreds of tokens' bytes from the page. */
const pool = Buffer.alloc(TOKEN_BYTES * 256);
let used = pool.length;

/** A new lease token: 12 random bytes as base64url (16 characters), never handed out twice. */
export function newLeaseToken(): string {
  if (used + TOKEN_BYTES > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const token = pool.toString('base64url', used, used + TOKEN_BYTES);
  used += TOKEN_BYTES;
  return token;
}
