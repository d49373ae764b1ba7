import { isIPv4, isIPv6 } from 'node:net';

/**
 * The one key every per-address limit counts a client by: an IPv4 address as itself (an IPv4 address
 * mapped into IPv6 included), an IPv6 address by its /64 prefix, as `2001:db8:0:1::/64`. A single
 * IPv6 client is commonly given a whole /64, so counting its addresses one by one would give it a
 * fresh allowance for every address it picks.
 */
export function clientAddressKey(address: string): string {
  if (isIPv4(address)) return address;
  const withoutZone = address.split('%', 1)[0]!;
  if (!isIPv6(withoutZone)) return address;
  const groups = ipv6Groups(withoutZone);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parse = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((piece) => {
          if (!piece.includes('.')) return [Number.parseInt(piece, 16)];
          const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const first = parse(head);
  if (tail === undefined) return first;
  const last = parse(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}
