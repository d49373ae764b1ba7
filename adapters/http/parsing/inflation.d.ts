// The package ships no types: the stream its Content-Encoding undoes (identity: the stream itself).
declare module 'inflation' {
  import type { Readable } from 'node:stream';
  export default function inflate(stream: Readable, options?: { readonly encoding?: string }): Readable;
}
