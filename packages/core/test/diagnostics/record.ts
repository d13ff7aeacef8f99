/** Records what Tollgate publishes on its channels while a test runs. */
import { afterEach } from 'vitest';
import {
  subscribeTollgate,
  type TollgateChannel,
  type TollgateEvents,
} from '../../src/diagnostics/channels.js';

const stops: (() => void)[] = [];

afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** The events published on `name` from now until the test ends, as a live array. */
export function record<Name extends TollgateChannel>(name: Name): TollgateEvents[Name][] {
  const seen: TollgateEvents[Name][] = [];
  stops.push(subscribeTollgate(name, (event) => seen.push(event)));
  return seen;
}
