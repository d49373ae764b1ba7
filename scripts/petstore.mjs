#!/usr/bin/env node
// The `petstore` command: runs the TypeScript entry through tsx (no build step) as `main.ts cli …`.
import { register } from 'tsx/esm/api';

register();
process.argv.splice(2, 0, 'cli');
await import('../adapters/main.ts');
