import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { MAX_WEBHOOK_URL_LENGTH } from '../../contract/webhooks.ts';

/** A target the service refuses to send to; the message says why, for the client. */
export class UnsafeWebhookTarget extends Error {
  /** The URL reaches a private address: a setting allows it, which the caller names as it applies to it. */
  readonly privateAddress: boolean;

  constructor(message: string, options: { privateAddress?: boolean } = {}) {
    super(message);
    this.name = 'UnsafeWebhookTarget';
    this.privateAddress = options.privateAddress ?? false;
  }
}

/** The refusal as the service tells it (an answer, a delivery's error): a private address names the service's own setting. */
export function serviceRefusal(error: UnsafeWebhookTarget): string {
  return error.privateAddress ? `${error.message} (a service started with PETSTORE_WEBHOOKS_ALLOW_PRIVATE=true allows it, for development)` : error.message;
}

/** Where webhooks may go. `allowPrivate` (development, tests) lets them reach the service's own network. */
export interface TargetPolicy {
  readonly allowPrivate: boolean;
}


/** The URL as the service will call it: http or https, no credentials, no fragment; else `UnsafeWebhookTarget`. */
export function parseWebhookUrl(text: string): URL {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) throw new UnsafeWebhookTarget(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UnsafeWebhookTarget('url must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeWebhookTarget('url must be an absolute http or https URL');
  if (url.username !== '' || url.password !== '') throw new UnsafeWebhookTarget('url must not hold credentials');
  if (url.hash !== '') throw new UnsafeWebhookTarget('url must not have a fragment');
  return url;
}

/**
 * The addresses the URL's host stands for, each checked: by default none may be loopback, link-local,
 * private, unspecified, multicast or otherwise reserved, whether written as an address or reached
 * through a name (`localhost`). Checked at creation and again before each delivery, and the delivery
 * connects to an address checked here, so a name that later resolves elsewhere gains nothing.
 */
export async function resolveSafeTarget(url: URL, policy: TargetPolicy): Promise<{ address: string; family: 4 | 6 }[]> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new UnsafeWebhookTarget(`the host ${host} of url does not resolve`);
    }
  }
  if (addresses.length === 0) throw new UnsafeWebhookTarget(`the host ${host} of url does not resolve`);
  if (!policy.allowPrivate) {
    const refused = addresses.find(({ address }) => !isPublicAddress(address));
    if (refused) {
      throw new UnsafeWebhookTarget(
        `url must reach a public address; ${host === refused.address ? host : `${host} (${refused.address})`} is loopback, private, link-local or reserved`,
        { privateAddress: true },
      );
    }
  }
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/**
 * False for the address ranges no webhook may reach by default: IANA's special-purpose ranges (RFC 6890 and
 * its successors) that are not globally reachable, and the IPv4 address inside every IPv6 form that carries one.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return isPublicIpv4(ipv4Octets(address));
  if (family !== 6) return false;
  const words = ipv6Words(address);
  if (words === undefined) return false;
  const embedded = embeddedIpv4(words);
  if (embedded !== undefined) return isPublicIpv4(embedded);
  const [first, second] = words as [number, number];
  // Outside 2000::/3 nothing is global unicast: ::/96 (IPv4-compatible), ::ffff:0:0:0/96 (IPv4-translated),
  // 64:ff9b:1::/48 (local-use NAT64), 100::/64 (discard), fc00::/7, fe80::/10, fec0::/10, ff00::/8 and the unassigned rest.
  if ((first & 0xe000) !== 0x2000) return false;
  if (first === 0x2001 && second < 0x0200) return false; // 2001::/23 IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID
  if (first === 0x2001 && second === 0x0db8) return false; // documentation
  if ((first & 0xfff0) === 0x3ff0) return false; // 3fff::/20 documentation
  return true;
}

/**
 * The IPv4 address an IPv6 address stands for, where the form routes to it: IPv4-mapped (::ffff:a.b.c.d),
 * the well-known NAT64 prefix (64:ff9b::/96) and 6to4 (2002:aabb:ccdd::/48). Other forms that carry one
 * (IPv4-compatible, IPv4-translated, local-use NAT64, Teredo) are refused whole.
 */
function embeddedIpv4(words: number[]): number[] | undefined {
  const octets = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff];
  if (words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff) return octets(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0)) return octets(words[6]!, words[7]!);
  if (words[0] === 0x2002) return octets(words[1]!, words[2]!);
  return undefined;
}

function isPublicIpv4([a, b, c]: number[]): boolean {
  if (a === 0 || a === 10 || a === 127) return false; // this network, private, loopback
  if (a === 100 && b! >= 64 && b! <= 127) return false; // shared address space (carrier NAT)
  if (a === 169 && b === 254) return false; // link-local (cloud metadata services)
  if (a === 172 && b! >= 16 && b! <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // protocol assignments, documentation
  if (a === 192 && b === 88 && c === 99) return false; // 6to4 relay anycast (deprecated)
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false;
  if (a === 203 && b === 0 && c === 113) return false;
  return a! < 224; // multicast, reserved and broadcast above
}

function ipv4Octets(address: string): number[] {
  return address.split('.').map(Number);
}

/** The eight 16-bit words of an IPv6 address (with `::` expanded and a trailing IPv4 part split). */
function ipv6Words(address: string): number[] | undefined {
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = ipv4Octets(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headWords = head === '' ? [] : head.split(':');
  const tailWords = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headWords.length - tailWords.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined;
  return [...headWords, ...new Array<string>(missing).fill('0'), ...tailWords].map((word) => Number.parseInt(word, 16));
}
