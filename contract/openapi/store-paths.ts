import { schemaRef, json, header, parameter, BODY_CODES, experimentalOperations, answer, body } from './parts.ts';
import type { Json } from './parts.ts';

const STORE_EXPERIMENTAL = 'Experimental: not part of interface 1.0.0. Every key sees the store\'s orders, as it sees its pets.';

const storeOperation = experimentalOperations('Store', STORE_EXPERIMENTAL);
const writtenOrder = (description: string, headers: Json = {}) => answer(description, 'Order', { ETag: header('OrderETag'), 'Petstore-Position': header('Position'), ...headers });

/** The store (`/store`): orders that reserve their pet, and the inventory, each operation experimental. */
export const STORE_PATHS: Json = {
  '/store/orders': {
    post: storeOperation(
      'placeOrder', 'Place an order for an animal',
      'The animal must be `available`: it becomes `pending`, held by the order, in the same commit. An animal that is pending, sold or without a status is 409 ' +
        '`pet_not_available`; a `petId` that names no animal is 422 `unknown_pet`. Unknown fields are refused.',
      { 201: writtenOrder('Placed (the same answer again for a repeated Idempotency-Key and body)', { Location: header('OrderLocation') }) },
      [...BODY_CODES, 'idempotency_key_reused', 'pet_not_available', 'unknown_pet'],
      { parameters: [parameter('IdempotencyKey'), parameter('XRequestId')], ...body('NewOrder') },
    ),
    get: storeOperation(
      'listOrders', 'List store orders',
      'A page of orders in ascending id order, optionally of one status or one animal; `Link: <…>; rel="next"` (RFC 8288) when more follow.',
      { 200: answer('A page of orders', 'Orders', { Link: header('NextOrdersLink') }) }, ['invalid_query'],
      { parameters: [parameter('Limit'), parameter('OrderStatus'), parameter('OrderPetId'), parameter('OrderAfter'), parameter('MinPosition'), parameter('XRequestId')] },
    ),
  },
  '/store/orders/{orderId}': {
    parameters: [parameter('OrderId')],
    get: storeOperation(
      'getOrder', 'Get a store order', 'The order with its version as `ETag`.',
      { 200: answer('The order', 'Order', { ETag: header('OrderETag') }) }, ['invalid_path', 'not_found'],
      { parameters: [parameter('MinPosition'), parameter('XRequestId')] },
    ),
    patch: storeOperation(
      'updateOrder', 'Approve or deliver an order',
      'placed → approved → delivered; delivering sells the animal in the same commit. Moving to the status it has changes nothing; any other move is 409 ' +
        '`illegal_transition`. With `If-Match` the move applies only while the order is at that version.',
      { 200: writtenOrder('The order after the move') }, ['invalid_path', ...BODY_CODES, 'not_found', 'illegal_transition', 'version_mismatch'],
      {
        parameters: [parameter('IfMatch'), parameter('XRequestId')],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: schemaRef('OrderPatch') } }, 'application/merge-patch+json': { schema: { $ref: schemaRef('OrderPatch') } } },
        },
      },
    ),
    delete: storeOperation(
      'cancelOrder', 'Cancel an order',
      'A placed or approved order is cancelled (it stays readable as `cancelled`) and its animal is `available` again in the same commit; cancelling again is 204 too; ' +
        'a delivered order is 409 `illegal_transition`.',
      { 204: answer('Cancelled', undefined, { 'Petstore-Position': header('Position') }) }, ['invalid_path', 'not_found', 'illegal_transition', 'version_mismatch'],
      { parameters: [parameter('IfMatch'), parameter('XRequestId')] },
    ),
  },
  '/store/inventory': {
    get: storeOperation(
      'getInventory', 'Count the animals by status', 'Exact: the read model at the time of the answer (at least `Petstore-Min-Position` when sent). An animal without a status is in no count.',
      { 200: answer('The counts', 'Inventory') }, [], { parameters: [parameter('MinPosition'), parameter('XRequestId')] },
    ),
  },
};
