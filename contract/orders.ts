import { FormatRegistry, Type } from '@sinclair/typebox';
import { ORDER_STATUSES } from '../domain/index.ts';

/** RFC 3339 `date-time` (OpenAPI's format): a date, a time, a zone; kept as sent. */
export function isDateTime(value: string): boolean {
  return /^(?:[0-9]{4}-[0-9]{2}-[0-9]{2})[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$/.test(value) && !Number.isNaN(Date.parse(value));
}

if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime);

const OrderIdSchema = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' });
const ShipDateSchema = Type.String({ format: 'date-time', maxLength: 64, description: 'When the order is to ship (RFC 3339), kept exactly as sent.' });

export const OrderStatusSchema = Type.Union(ORDER_STATUSES.map((status) => Type.Literal(status)), {
  $id: 'OrderStatus',
  description: 'placed → approved → delivered; placed or approved → cancelled.',
});

export const NewOrderSchema = Type.Object(
  {
    petId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, format: 'int64', description: 'The pet to order: it must be available.' }),
    shipDate: Type.Optional(ShipDateSchema),
  },
  { $id: 'NewOrder', additionalProperties: false },
);

export const OrderSchema = Type.Object(
  {
    id: OrderIdSchema,
    petId: Type.Integer({ minimum: 1, format: 'int64' }),
    status: OrderStatusSchema,
    shipDate: Type.Optional(ShipDateSchema),
    complete: Type.Boolean({ description: 'True once delivered.' }),
  },
  { $id: 'Order', additionalProperties: false, description: 'A store order: one pet (an animal, so no quantity), which it holds while placed or approved.' },
);

export const OrdersSchema = Type.Array(OrderSchema, { $id: 'Orders' });

export const OrderPatchSchema = Type.Object(
  { status: Type.Union([Type.Literal('approved'), Type.Literal('delivered')]) },
  { $id: 'OrderPatch', additionalProperties: false, description: 'placed → approved → delivered; delivering sells the pet in the same commit.' },
);

export const InventorySchema = Type.Object(
  { available: Type.Integer({ minimum: 0 }), pending: Type.Integer({ minimum: 0 }), sold: Type.Integer({ minimum: 0 }) },
  { $id: 'Inventory', additionalProperties: false, description: 'The pets by status, exact (a pet without a status is in none).' },
);

export const OrderIdParameterSchema = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  format: 'int64',
  description: 'Decimal digits only (anything else is 400); digits that can name no order are 404.',
});
