/** GET /pets/{petId} has been deprecated since interface 1.0.0 reached us (2026-11-21, RFC 9745 form). */
export const GET_PET_DEPRECATION = '@1795219200';
/** Removed on 5 December 2030 (RFC 8594). */
export const GET_PET_SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';
