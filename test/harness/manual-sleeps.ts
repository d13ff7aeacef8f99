/** Sleeps that end only when a test says so: a limiter's `sleep`, beside a store on a manual clock. */

/** One sleep a limiter started: its length, whether its caller gave up on it, and how to end it. */
export interface ManualSleep {
  readonly ms: number;
  /** `true` once the signal the sleep was given aborted (the client went away): it has ended then. */
  readonly aborted: boolean;
  /** Ends the sleep: move the clock by `ms` first, so the turn has come by the store's clock too. */
  wake(): void;
}

export interface ManualSleeps {
  /** Pass as `sleep` (a limiter's, or `delay.sleep`): resolves on `wake()`, or as soon as `signal` aborts. */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Every sleep started so far, in the order the limiter started them. */
  readonly started: readonly ManualSleep[];
}

export function manualSleeps(): ManualSleeps {
  const started: ManualSleep[] = [];
  return {
    started,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        const sleep = { ms, aborted: false, wake: resolve };
        started.push(sleep);
        signal?.addEventListener(
          'abort',
          () => {
            sleep.aborted = true;
            resolve();
          },
          { once: true },
        );
      }),
  };
}
