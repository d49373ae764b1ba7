import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../adapters/config.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    assert.deepEqual(loadConfig({}), {
      port: 3000,
      host: '127.0.0.1',
      deployment: 'development',
      database: './data/petstore.db',
      apiKeys: [],
      productionUrl: undefined,
      stagingUrl: undefined,
      publicBaseUrl: undefined,
      logLevel: 'info',
    });
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
});
