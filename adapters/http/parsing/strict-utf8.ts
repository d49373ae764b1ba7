const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The text the bytes encode in UTF-8 (a leading byte order mark dropped), or the offset of the first
 * byte that does not belong to a well-formed character: overlong forms, surrogates, code points past
 * U+10FFFF, stray continuation bytes and truncated sequences are all refused, never replaced.
 */
export function decodeUtf8Strictly(bytes: Uint8Array): { readonly text: string } | { readonly invalidAt: number } {
  try {
    return { text: strictDecoder.decode(bytes) };
  } catch {
    return { invalidAt: firstInvalidUtf8Offset(bytes) };
  }
}

/** The offset of the first byte of the first ill-formed sequence (Unicode's table 3-7), or -1 when there is none. */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index]!;
    if (lead < 0x80) {
      index++;
      continue;
    }
    const [length, secondMin, secondMax] = sequenceShape(lead);
    if (length === 0) return index;
    for (let next = 1; next < length; next++) {
      const byte = bytes[index + next];
      const [min, max] = next === 1 ? [secondMin, secondMax] : [0x80, 0xbf];
      // A truncated or broken sequence is reported where it starts: that is where the bad character is.
      if (byte === undefined || byte < min || byte > max) return index;
    }
    index += length;
  }
  return -1;
}

/** How many bytes a sequence with this lead byte has, and the range its second byte must fall in. */
function sequenceShape(lead: number): readonly [length: number, secondMin: number, secondMax: number] {
  if (lead >= 0xc2 && lead <= 0xdf) return [2, 0x80, 0xbf];
  if (lead === 0xe0) return [3, 0xa0, 0xbf]; // below: overlong
  if (lead === 0xed) return [3, 0x80, 0x9f]; // above: surrogates
  if (lead >= 0xe1 && lead <= 0xef) return [3, 0x80, 0xbf];
  if (lead === 0xf0) return [4, 0x90, 0xbf]; // below: overlong
  if (lead >= 0xf1 && lead <= 0xf3) return [4, 0x80, 0xbf];
  if (lead === 0xf4) return [4, 0x80, 0x8f]; // above: past U+10FFFF
  return [0, 0, 0]; // a continuation byte, an overlong lead (C0, C1) or F5–FF
}
