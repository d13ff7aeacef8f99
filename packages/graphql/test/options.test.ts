/** Bad options throw where the limit is made, as TollgateOptionErrors naming the package and the option. */
import { MemoryStore, TollgateError, TollgateOptionError } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import {
  apolloCostLimit,
  type CostLimitOptions,
  estimateCost,
  mercuriusCostLimit,
  useCostLimit,
} from '../src/index.js';

const key = () => 'user:1';
const valid: CostLimitOptions<unknown> = { key, limit: 100, window: '1m' };

describe('the options', () => {
  it.each([
    ['no key', { limit: 100, window: '1m' }, /key must be a function/],
    ['no limit', { key, window: '1m' }, /needs limit and window/],
    [
      'limit and policies',
      { ...valid, policies: { limit: 5, window: '1s' } },
      /policies, or limit and window, not both/,
    ],
    ['a bad window', { ...valid, window: 'soon' }, /window/],
    ['an unknown option', { ...valid, maxCost: 5 }, /has no option 'maxCost'/],
    ['a bad header profile', { ...valid, headers: 'draft-99' }, /headers must be/],
    [
      'a bad onStoreError',
      { ...valid, onStoreError: 'throw' },
      /onStoreError must be 'insurance', 'allow' or 'deny'/,
    ],
    ['a negative weight', { ...valid, objectWeight: -1 }, /objectWeight must be a number, 0 or more/],
    ['a zero base cost', { ...valid, baseCost: 0 }, /baseCost must be a number above 0/],
    ['a fractional list size', { ...valid, defaultListSize: 2.5 }, /defaultListSize must be a whole number/],
    ['bad list arguments', { ...valid, listArguments: 'first' }, /listArguments must be an array/],
    ['a bad dryRun', { ...valid, dryRun: 'yes' }, /dryRun must be/],
  ])('refuses %s', (_, options, message) => {
    const attempt = () => useCostLimit(options as never);
    expect(attempt).toThrow(TollgateOptionError);
    expect(attempt).toThrow(message);
    expect(attempt).toThrow(/^@tollgate\/graphql: /);
    try {
      attempt();
    } catch (error) {
      expect(error).toBeInstanceOf(TypeError);
      expect(error).toBeInstanceOf(TollgateError);
      expect((error as TollgateOptionError).code).toBe('TOLLGATE_INVALID_OPTION');
    }
  });

  it('are checked by every server’s entry point, and by estimateCost', () => {
    expect(() => apolloCostLimit({ ...valid, limit: -1 })).toThrow(/^@tollgate\/graphql: .*limit/);
    const app = { addHook: () => {}, graphql: { addHook: () => {} } };
    expect(() => mercuriusCostLimit(app, { ...valid, window: 0 } as never)).toThrow(TollgateOptionError);
    expect(() => estimateCost({} as never, { scalarWeight: Number.NaN })).toThrow(/scalarWeight/);
  });

  it('take policies, a store and the cost rules', () => {
    const plugin = useCostLimit({
      key,
      policies: [
        { limit: 100, window: '1m' },
        { limit: 1000, window: '1h' },
      ],
      store: new MemoryStore(),
      name: 'api-graphql',
      defaultListSize: 25,
      listArguments: ['first', 'take'],
      connectionFields: ['edges'],
      onStoreError: 'deny',
      headers: 'draft-7',
      legacyHeaders: true,
      dryRun: () => false,
    });
    expect(typeof plugin.onExecute).toBe('function');
  });
});
