export * from './pet.ts';
export * from './pet-status.ts';
export * from './pet-rule-violation.ts';
export * from './status-rules.ts';
export * from './order.ts';
