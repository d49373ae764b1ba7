// If-Match as the service reads it, shared by its parser and the OpenAPI document:
// `*`, or a list of entity tags (RFC 9110 §8.8.3: [ "W/" ] DQUOTE *etagc DQUOTE).
const ENTITY_TAG_SOURCE = String.raw`(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"`;

/** One entity tag: its weakness mark (group 1) and its opaque text (group 2). */
export const ENTITY_TAG = new RegExp(ENTITY_TAG_SOURCE, 'g');

/** The whole header: `*` or a comma-separated list of entity tags, white space around each. */
export const IF_MATCH_PATTERN = String.raw`^\s*(\*|${ENTITY_TAG_SOURCE}(\s*,\s*${ENTITY_TAG_SOURCE})*)\s*$`;
