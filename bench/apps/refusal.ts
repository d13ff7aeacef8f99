/**
 * The DENY floor: Tollgate's own refusal of a scenario (its status, rate-limit headers and problem-details
 * body), for an app that sends it with no limiter at all. DENY's goal compares a limiter's refusals with
 * a baseline that answers `ok`; this app shows what sending the refusal alone costs.
 */
import { createHttpLimiter, type RequestAccess } from '@tollgate/core/adapter';
import type { Scenario } from './scenarios.js';

/** A refusal, ready to send. */
export interface Refusal {
  readonly status: number;
  /** The rate-limit fields (`RateLimit-Policy`, `RateLimit`, `Retry-After`), without the content type. */
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly body: string;
}

/** Every request of the floor is the same client. */
const ONE_CLIENT: RequestAccess<undefined> = {
  ip: () => '127.0.0.1',
  socketIp: () => '127.0.0.1',
  header: () => undefined,
};

/** Tollgate's refusal once `scenario`'s limit is spent, as its default options answer it. */
export async function tollgateRefusal(scenario: Scenario): Promise<Refusal> {
  const limiter = createHttpLimiter(
    { limit: scenario.limit, window: scenario.windowMs, key: () => 'floor' },
    ONE_CLIENT,
    { adapter: 'bench refusal floor' },
  );
  let outcome = await limiter.check(undefined);
  for (let spent = 1; outcome.kind === 'allowed' && spent <= scenario.limit; spent++) {
    outcome = await limiter.check(undefined);
  }
  if (outcome.kind !== 'limited')
    throw new Error(`${scenario.name}: Tollgate did not refuse (${outcome.kind})`);
  const { status, contentType, body } = await limiter.rejection(undefined, outcome.info);
  return { status, headers: { ...outcome.headers }, contentType, body };
}
