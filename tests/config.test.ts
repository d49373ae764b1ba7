import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIGURATION_VARIABLES, ConfigError, DEFAULT_LIMITS, loadConfig } from '../adapters/config/config.ts';
import { PRESSURE_SHARE } from '../adapters/http/server/client-limits.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    assert.deepEqual(loadConfig({}), {
      port: 3000,
      host: '127.0.0.1',
      deployment: 'development',
      database: { kind: 'sqlite', path: './data/petstore.db' },
      apiKeys: [],
      productionUrl: undefined,
      stagingUrl: undefined,
      publicBaseUrl: undefined,
      logLevel: 'info',
      limits: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 5_000,
        shutdownGraceMs: 10_000,
        maxHeaderBytes: 16_384,
        maxConnections: 1024,
        maxConnectionsPerClient: 256,
        waitingTimeoutUnderPressureMs: 1000,
      },
      rateLimit: undefined,
      keyFailureLimit: { perSecond: 1, burst: 100 },
      metrics: true,
      corsOrigins: [],
      tracing: undefined,
      shutdownDelayMs: 0,
      idempotencyKeyTtlMs: 86_400_000,
      eventStreams: { maxStreams: 512, maxStreamsPerClient: 128, heartbeatMs: 15_000 },
      maxWaitingClaims: 256,
      webhooks: { allowPrivate: false, timeoutMs: 10_000, retry: { scheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000] }, leaseMs: 30_000, maxPerKey: 100, secretOverlapMs: 86_400_000, maxConnections: 1000 },
      workers: 1,
    });
  });

  it('leaves streams and waiting claims together no more than the connections past which waiting ones give way', () => {
    const config = loadConfig({ PETSTORE_MAX_CONNECTIONS: '100' });
    assert.ok(config.eventStreams.maxStreams + config.maxWaitingClaims <= Math.floor(config.limits.maxConnections * PRESSURE_SHARE));
    assert.equal(config.maxWaitingClaims, 25);
  });

  it('reads PETSTORE_IDEMPOTENCY_KEY_TTL_MS: milliseconds, a whole number from 1', () => {
    assert.equal(loadConfig({ PETSTORE_IDEMPOTENCY_KEY_TTL_MS: '3600000' }).idempotencyKeyTtlMs, 3_600_000);
    for (const wrong of ['0', '-1', '1.5', '1e6', 'day']) {
      assert.throws(() => loadConfig({ PETSTORE_IDEMPOTENCY_KEY_TTL_MS: wrong }), /PETSTORE_IDEMPOTENCY_KEY_TTL_MS is invalid/, wrong);
    }
  });

  it('reads PETSTORE_WORKERS: a number of processes, or auto for one per core', () => {
    assert.equal(loadConfig({ PETSTORE_WORKERS: '4' }).workers, 4);
    assert.equal(loadConfig({ PETSTORE_WORKERS: 'auto' }).workers, availableParallelism());
    for (const wrong of ['0', '-1', '1.5', 'all', '1000']) {
      assert.throws(() => loadConfig({ PETSTORE_WORKERS: wrong }), /PETSTORE_WORKERS is invalid/, wrong);
    }
  });

  it('reads the limits and the rate limit', () => {
    const config = loadConfig({
      PETSTORE_HEADERS_TIMEOUT_MS: '500',
      PETSTORE_REQUEST_TIMEOUT_MS: '1500',
      PETSTORE_KEEP_ALIVE_TIMEOUT_MS: '250',
      PETSTORE_SHUTDOWN_DELAY_MS: '3000',
      PETSTORE_SHUTDOWN_GRACE_MS: '2000',
      PETSTORE_MAX_HEADER_BYTES: '4096',
      PETSTORE_MAX_CONNECTIONS: '8',
      PETSTORE_MAX_CONNECTIONS_PER_CLIENT: '3',
      PETSTORE_WAITING_TIMEOUT_UNDER_PRESSURE_MS: '100',
      PETSTORE_RATE_LIMIT: '0.5,20',
      PETSTORE_KEY_FAILURE_LIMIT: '0.25,5',
    });
    assert.deepEqual(config.keyFailureLimit, { perSecond: 0.25, burst: 5 });
    assert.equal(loadConfig({ PETSTORE_KEY_FAILURE_LIMIT: 'off' }).keyFailureLimit, undefined);
    assert.deepEqual(config.limits, {
      headersTimeoutMs: 500,
      requestTimeoutMs: 1500,
      keepAliveTimeoutMs: 250,
      shutdownGraceMs: 2000,
      maxHeaderBytes: 4096,
      maxConnections: 8,
      maxConnectionsPerClient: 3,
      waitingTimeoutUnderPressureMs: 100,
    });
    assert.equal(config.shutdownDelayMs, 3000);
    assert.deepEqual(config.rateLimit, { perSecond: 0.5, burst: 20 });
  });

  it('leaves rate limiting off for "off"', () => {
    assert.equal(loadConfig({ PETSTORE_RATE_LIMIT: 'off' }).rateLimit, undefined);
    assert.deepEqual(loadConfig({}).limits, DEFAULT_LIMITS);
  });

  it('serves metrics by default only in development, and as PETSTORE_METRICS says otherwise', () => {
    const production = { PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: 'https://api.example.com/v1' };
    assert.equal(loadConfig(production).metrics, false);
    assert.equal(loadConfig({ ...production, PETSTORE_METRICS: 'true' }).metrics, true);
    assert.equal(loadConfig({ PETSTORE_ENV: 'staging', PETSTORE_STAGING_URL: 'https://staging.example.com/v1' }).metrics, false);
    assert.equal(loadConfig({ PETSTORE_METRICS: 'false' }).metrics, false);
  });

  it('reads CORS origins as browsers send them, or * for any', () => {
    assert.deepEqual(loadConfig({ PETSTORE_CORS_ORIGINS: 'https://app.example.com,HTTP://Local.Test:8080,https://x.example.com:443' }).corsOrigins, [
      'https://app.example.com',
      'http://local.test:8080',
      'https://x.example.com',
    ]);
    assert.deepEqual(loadConfig({ PETSTORE_CORS_ORIGINS: '*' }).corsOrigins, ['*']);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      PETSTORE_ENV: 'production',
      PETSTORE_DATABASE: '/var/lib/petstore.db',
      PETSTORE_API_KEYS: 'aaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbb',
      PETSTORE_PRODUCTION_URL: 'https://api.example.com/v1',
      PETSTORE_STAGING_URL: 'https://staging.example.com/v1',
      PETSTORE_LOG_LEVEL: 'warn',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.deepEqual(config.apiKeys, ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb']);
    assert.equal(config.publicBaseUrl, 'https://api.example.com/v1');
    assert.equal(config.logLevel, 'warn');
  });

  it('takes the staging address as the public base in staging', () => {
    const config = loadConfig({ PETSTORE_ENV: 'staging', PETSTORE_STAGING_URL: 'https://staging.example.com/v1' });
    assert.equal(config.publicBaseUrl, 'https://staging.example.com/v1');
  });

  const invalid: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PETSTORE_ENV: 'prod' }, 'PETSTORE_ENV'],
    [{ PETSTORE_LOG_LEVEL: 'loud' }, 'PETSTORE_LOG_LEVEL'],
    [{ PETSTORE_API_KEYS: 'short' }, 'PETSTORE_API_KEYS'],
    [{ PETSTORE_API_KEYS: 'aaaaaaaaaaaaaaaa,,bbbbbbbbbbbbbbbb' }, 'PETSTORE_API_KEYS'],
    [{ PETSTORE_PRODUCTION_URL: 'https://api.example.com' }, 'PETSTORE_PRODUCTION_URL'],
    [{ PETSTORE_STAGING_URL: 'ftp://x/v1' }, 'PETSTORE_STAGING_URL'],
    [{ PETSTORE_ENV: 'production' }, 'PETSTORE_PRODUCTION_URL'],
    [{ PETSTORE_ENV: 'staging' }, 'PETSTORE_STAGING_URL'],
    [{ PETSTORE_HEADERS_TIMEOUT_MS: '0' }, 'PETSTORE_HEADERS_TIMEOUT_MS'],
    [{ PETSTORE_REQUEST_TIMEOUT_MS: '1.5' }, 'PETSTORE_REQUEST_TIMEOUT_MS'],
    [{ PETSTORE_HEADERS_TIMEOUT_MS: '20000', PETSTORE_REQUEST_TIMEOUT_MS: '10000' }, 'PETSTORE_REQUEST_TIMEOUT_MS'],
    [{ PETSTORE_SHUTDOWN_GRACE_MS: '-5' }, 'PETSTORE_SHUTDOWN_GRACE_MS'],
    [{ PETSTORE_MAX_HEADER_BYTES: '16k' }, 'PETSTORE_MAX_HEADER_BYTES'],
    [{ PETSTORE_MAX_CONNECTIONS: '0' }, 'PETSTORE_MAX_CONNECTIONS'],
    [{ PETSTORE_MAX_CONNECTIONS_PER_CLIENT: '0' }, 'PETSTORE_MAX_CONNECTIONS_PER_CLIENT'],
    [{ PETSTORE_WAITING_TIMEOUT_UNDER_PRESSURE_MS: '1s' }, 'PETSTORE_WAITING_TIMEOUT_UNDER_PRESSURE_MS'],
    [{ PETSTORE_RATE_LIMIT: '10' }, 'PETSTORE_RATE_LIMIT'],
    [{ PETSTORE_RATE_LIMIT: '10,0' }, 'PETSTORE_RATE_LIMIT'],
    [{ PETSTORE_RATE_LIMIT: '0,5' }, 'PETSTORE_RATE_LIMIT'],
    [{ PETSTORE_RATE_LIMIT: 'on' }, 'PETSTORE_RATE_LIMIT'],
    [{ PETSTORE_METRICS: 'yes' }, 'PETSTORE_METRICS'],
    [{ PETSTORE_CORS_ORIGINS: 'https://app.example.com/path' }, 'PETSTORE_CORS_ORIGINS'],
    [{ PETSTORE_CORS_ORIGINS: 'app.example.com' }, 'PETSTORE_CORS_ORIGINS'],
    [{ PETSTORE_CORS_ORIGINS: 'https://a.example.com,*' }, 'PETSTORE_CORS_ORIGINS'],
    [{ PETSTORE_CORS_ORIGINS: 'https://[bad' }, 'PETSTORE_CORS_ORIGINS'],
    [{ PETSTORE_DATABASE: 'postgres:petstore' }, 'PETSTORE_DATABASE'],
    [{ PETSTORE_DATABASE: 'postgresql://[bad/petstore' }, 'PETSTORE_DATABASE'],
    [{ PETSTORE_DATABASE_POOL_SIZE: '0' }, 'PETSTORE_DATABASE_POOL_SIZE'],
    [{ PETSTORE_DATABASE_POOL_SIZE: 'ten' }, 'PETSTORE_DATABASE_POOL_SIZE'],
    [{ PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: '0' }, 'PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS'],
    [{ PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: '5s' }, 'PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS'],
  ];
  for (const [environment, variable] of invalid) {
    it(`refuses ${JSON.stringify(environment)} naming ${variable}`, () => {
      assert.throws(() => loadConfig(environment), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, new RegExp(`^${variable} `));
        return true;
      });
    });
  }

  it('says in words what PETSTORE_ENV and PETSTORE_LOG_LEVEL take, never a validator\'s "Expected union value"', () => {
    assert.throws(() => loadConfig({ PETSTORE_ENV: 'prod' }), { message: 'PETSTORE_ENV is invalid ("prod"): one of development, staging, production' });
    assert.throws(() => loadConfig({ PETSTORE_LOG_LEVEL: 'verbose' }), { message: 'PETSTORE_LOG_LEVEL is invalid ("verbose"): one of fatal, error, warn, info, debug, trace, silent' });
  });

  // HOST and PETSTORE_DATABASE take any text (an interface name, a file path); PETSTORE_API_KEYS has its own messages.
  for (const variable of CONFIGURATION_VARIABLES.filter((name) => !['HOST', 'PETSTORE_DATABASE'].includes(name))) {
    it(`refuses a wrong ${variable} naming it and saying in words what it takes`, () => {
      assert.throws(() => loadConfig({ [variable]: 'not right' }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, new RegExp(`^${variable} is invalid\\b.*: \\S`));
        assert.doesNotMatch(error.message, /Expected|union|pattern|\^|\$\)/);
        return true;
      });
    });
  }

  it('refuses a database URL of a kind it does not speak, rather than taking it for a file name', () => {
    for (const value of ['mysql://x', 'mysql://root:hunter2@db/pets', 'sqlite:pets.db', 'file:///var/pets.db', 'https://example.com/pets.db']) {
      assert.throws(() => loadConfig({ PETSTORE_DATABASE: value }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /^PETSTORE_DATABASE is invalid: .*a SQLite file path .* or a PostgreSQL URL/);
        assert.doesNotMatch(error.message, /hunter2|mysql/);
        return true;
      });
    }
  });

  it('keeps a Windows drive path and a path written ./ before a colon a SQLite path', () => {
    for (const path of ['C:\\data\\pets.db', 'c:/data/pets.db', './mysql:x', 'pets.db']) {
      assert.deepEqual(loadConfig({ PETSTORE_DATABASE: path }).database, { kind: 'sqlite', path });
    }
  });

  it('takes a postgres:// or postgresql:// URL as PostgreSQL, with the pool defaults', () => {
    for (const url of ['postgres://petstore:secret@db.internal:5432/petstore', 'postgresql://localhost/petstore', 'POSTGRES://h/d']) {
      assert.deepEqual(loadConfig({ PETSTORE_DATABASE: url }).database, { kind: 'postgres', url, poolSize: 10, statementTimeoutMs: 5000 });
    }
  });

  it('reads the pool size and statement timeout', () => {
    const config = loadConfig({ PETSTORE_DATABASE: 'postgres://h/d', PETSTORE_DATABASE_POOL_SIZE: '25', PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: '1500' });
    assert.deepEqual(config.database, { kind: 'postgres', url: 'postgres://h/d', poolSize: 25, statementTimeoutMs: 1500 });
  });

  it('keeps anything else a SQLite path', () => {
    for (const path of ['./postgres.db', 'postgres', '/var/lib/postgres://x']) {
      assert.deepEqual(loadConfig({ PETSTORE_DATABASE: path }).database, { kind: 'sqlite', path });
    }
  });

  const badKeys: Array<[string, string, RegExp]> = [
    ['prod-secret-key-0123456789,bad!key', '2nd', /shorter than 16/],
    ['prod-secret-key-0123456789,other-secret-key-with!bang', '2nd', /holds a character/],
    ['prod-secret-key-0123456789,,other-secret-key-0123456', '2nd', /is empty/],
    ['tiny9,prod-secret-key-0123456789', '1st', /shorter than 16/],
    ['prod-secret-key-0123456789,other-secret-key-0123456,third-secret-key-012345=x', '3rd', /holds a character/],
  ];
  for (const [keys, position, problem] of badKeys) {
    it(`names PETSTORE_API_KEYS and the ${position} key, never a key's text (${position})`, () => {
      assert.throws(() => loadConfig({ PETSTORE_API_KEYS: keys }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /^PETSTORE_API_KEYS /);
        assert.match(error.message, new RegExp(`the ${position} of its ${keys.split(',').length} `));
        assert.match(error.message, problem);
        for (const key of keys.split(',')) if (key.length >= 4) assert.ok(!error.message.includes(key), `the message repeats ${key}: ${error.message}`);
        assert.doesNotMatch(error.message, /secret|bad!|tiny9/);
        return true;
      });
    });
  }

  it('never repeats the value of a variable that may hold a secret, whatever is wrong with it', () => {
    const secrets: Array<Record<string, string>> = [
      { PETSTORE_DATABASE: 'postgres://user:hunter2@[bad/db' },
      { PETSTORE_DATABASE: 'postgres:user:hunter2@host/db' },
      { PETSTORE_PRODUCTION_URL: 'https://user:hunter2@api.example.com/v2' },
      { PETSTORE_STAGING_URL: 'ftp://user:hunter2@x/v1' },
    ];
    for (const environment of secrets) {
      assert.throws(() => loadConfig(environment), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, new RegExp(`^${Object.keys(environment)[0]} `));
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      });
    }
  });

  it('refuses a public base URL holding a user or password, naming the variable and never the password', () => {
    const published: Array<Record<string, string>> = [
      { PETSTORE_ENV: 'production', PETSTORE_PRODUCTION_URL: 'https://ops:secret@api.example.com/v1' },
      { PETSTORE_PRODUCTION_URL: 'https://ops@api.example.com/v1' },
      { PETSTORE_STAGING_URL: 'http://:secret@staging.example.com/v1' },
      { PETSTORE_ENV: 'staging', PETSTORE_STAGING_URL: 'https://ops:secret@staging.example.com/v1' },
    ];
    for (const environment of published) {
      const name = Object.keys(environment).find((variable) => variable.endsWith('_URL'))!;
      assert.throws(() => loadConfig(environment), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, new RegExp(`^${name} is invalid: it holds a user or password`));
        assert.doesNotMatch(error.message, /secret/);
        return true;
      });
    }
  });

  it('never repeats a PostgreSQL URL (it may hold a password) when refusing it', () => {
    assert.throws(() => loadConfig({ PETSTORE_DATABASE: 'postgres:user:hunter2@host/db' }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.doesNotMatch(error.message, /hunter2/);
      return true;
    });
  });
});
