#!/usr/bin/env node
// The `petstore` command: runs the TypeScript CLI through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../adapters/cli/main.ts');
