export declare const JSON_TYPE: string;

export interface CeilingBodies {
  /** Each listing's answer by its query string. */
  readonly gets: ReadonlyMap<string, Buffer>;
  /** The 201 of a creation. */
  readonly created: Buffer;
}

export declare function readCeilingBodies(file: string): CeilingBodies;
