import Koa from 'koa';

/** Counts the Koa contexts made while `run` runs: a request a pipeline branch answers makes none. */
export async function koaContextsDuring(run: () => Promise<void>): Promise<number> {
  const prototype = Koa.prototype as unknown as { createContext: (...args: unknown[]) => unknown };
  const createContext = prototype.createContext;
  let made = 0;
  prototype.createContext = function countedCreateContext(this: unknown, ...args: unknown[]) {
    made++;
    return createContext.apply(this, args);
  };
  try {
    await run();
  } finally {
    prototype.createContext = createContext;
  }
  return made;
}
