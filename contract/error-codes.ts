/** Every error code the service answers with, and the HTTP status it always comes with. */
export const ERROR_STATUS = {
  unauthorized: 401,
  invalid_query: 400,
  invalid_path: 400,
  invalid_body: 400,
  invalid_header: 400,
  malformed_json: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  headers_too_large: 431,
  request_timeout: 408,
  not_found: 404,
  method_not_allowed: 405,
  illegal_transition: 409,
  version_mismatch: 412,
  idempotency_key_reused: 422,
  limit_reached: 409,
  group_exists: 409,
  pet_not_available: 409,
  pet_reserved: 409,
  unknown_pet: 422,
  rate_limited: 429,
  too_many_in_flight: 429,
  unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
