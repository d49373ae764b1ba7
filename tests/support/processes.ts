/** Arguments that make a child `node` run TypeScript, wherever its working directory is. */
export const NODE_TS_ARGS: readonly string[] = ['--import', import.meta.resolve('tsx')];
