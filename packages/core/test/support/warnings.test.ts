import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Warnings } from '../../src/support/warnings.js';
import { recordingLogger } from '../http/fixtures.js';

describe('Warnings.once', () => {
  it('logs each code once, prefixed with the code', () => {
    const { logger, warnings } = recordingLogger();
    const reporter = new Warnings(logger, true);
    reporter.once('TOLLGATE_MISSING_IP', 'first');
    reporter.once('TOLLGATE_MISSING_IP', 'second');
    reporter.once('TOLLGATE_MISSING_KEY', 'third');
    expect(warnings).toEqual(['[TOLLGATE_MISSING_IP] first', '[TOLLGATE_MISSING_KEY] third']);
  });

  it('logs a code switched back on after others were switched off', () => {
    const { logger, warnings } = recordingLogger();
    const reporter = new Warnings(logger, { TOLLGATE_MISSING_IP: false, TOLLGATE_MISSING_KEY: true });
    reporter.once('TOLLGATE_MISSING_IP', 'off');
    reporter.once('TOLLGATE_MISSING_KEY', 'on');
    reporter.once('TOLLGATE_UNTRUSTED_FORWARDED_FOR', 'on by default');
    expect(warnings).toEqual([
      '[TOLLGATE_MISSING_KEY] on',
      '[TOLLGATE_UNTRUSTED_FORWARDED_FOR] on by default',
    ]);
  });
});

describe('Warnings.storeError', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'], now: 1_700_000_000_000 });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('logs one line per 10 s while failures repeat, then counts the ones it held back', () => {
    const { logger, errors } = recordingLogger();
    const reporter = new Warnings(logger, true);
    reporter.storeError(new Error('down'), 'allow');
    reporter.storeError(new Error('down'), 'allow');
    vi.advanceTimersByTime(9_999);
    reporter.storeError(new Error('down'), 'allow');
    expect(errors).toEqual(['[TOLLGATE_STORE_ERROR] rate-limit store failed, requests pass unlimited: down']);
    vi.advanceTimersByTime(1);
    reporter.storeError(new Error('still down'), 'deny');
    expect(errors[1]).toBe(
      '[TOLLGATE_STORE_ERROR] rate-limit store failed, requests fail: still down (2 more since the last report)',
    );
    vi.advanceTimersByTime(10_000);
    reporter.storeError(new Error('again'), 'allow');
    expect(errors[2]).toBe('[TOLLGATE_STORE_ERROR] rate-limit store failed, requests pass unlimited: again');
    expect(errors).toHaveLength(3);
  });

  it('logs nothing with warnings switched off', () => {
    const { logger, errors, warnings } = recordingLogger();
    const reporter = new Warnings(logger, false);
    reporter.storeError(new Error('down'), 'allow');
    reporter.once('TOLLGATE_MISSING_IP', 'x');
    expect([...errors, ...warnings]).toEqual([]);
  });
});
