/**
 * Sends checks to Redis in batches that Tollgate controls: a check is written at once when nothing is on
 * its way to that slot, and checks that arrive while a batch is on its way go together in the next one,
 * as one script call. Redis pays its per-command cost once per batch, and — unlike a client's own
 * auto-pipelining — each check's deadline starts when it is really written.
 */
import type { DeadlineWatch, Watched } from '../../support/deadline-watch.js';
import type { StoreUnavailableError } from '../../support/store-error.js';
import { TollgateError } from '../../support/tollgate-error.js';
import type { LuaScript } from './redis-client.js';
import {
  answerLength,
  batchCheckAnswers,
  batchCheckCall,
  firstAnswerAt,
  isSingleCheck,
  nowOfShape,
  policySetArgs,
  ScriptCall,
  type ScriptCheck,
  SETTLE_SCRIPT,
  singleCheckAnswers,
  singleCheckArgs,
  singleCheckScript,
} from './script/wire.js';

/**
 * Runs `script` (the settle script, or the single-check script) with these keys and arguments; resolves
 * to its answers, one after another. Should Redis have lost the script (NOSCRIPT), the call is written
 * again with `resent()`'s arguments, made then.
 */
export type SendBatch = (
  script: LuaScript,
  keys: string[],
  args: string[],
  resent: () => readonly string[],
) => Promise<unknown[]>;

/**
 * What the script answered for a check: its fields from `answers[at]` on (read with `script/wire.ts`),
 * the time it was decided at, and when it was written (`Date.now()`).
 */
export interface ScriptAnswer {
  readonly answers: readonly unknown[];
  readonly at: number;
  readonly nowMs: number;
  readonly sentAtMs: number;
}

/** How the batcher reaches Redis and the store's rules. */
export interface BatcherSettings {
  readonly send: SendBatch;
  /** Checks of one group may share a script call: one group for a single Redis, one per slot on a Cluster. */
  readonly groupOf: (key: string) => number;
  /** The deadline argument of a check written at `sentAtMs`. */
  readonly deadlineArg: (sentAtMs: number, timeoutMs: number | undefined) => string;
  readonly watch: DeadlineWatch;
  /** The most checks in one script call, so that no call keeps Redis busy for long. */
  readonly maxBatch: number;
  /** Redis refused a batch script the MGET that reads its keys at once: why (the keys were read one by one). */
  readonly keysReadOneByOne: (reason: string) => void;
}

/**
 * A check waiting for its answer, and, when it has a timeout, what the deadline watch watches. A class,
 * its fields all set in the constructor: V8 gives an object literal spread from the check and then
 * extended a slow dictionary shape, which cost a sixth of a check.
 */
class Queued implements Watched {
  sentAtMs = 0;
  /** Its shape in the script call it went in (1-based). */
  shape = 0;
  deadlineMs = 0;
  readonly timeoutMs: number;
  done = false;

  constructor(
    readonly check: ScriptCheck,
    readonly resolve: (answer: ScriptAnswer) => void,
    readonly reject: (error: unknown) => void,
    readonly watch: DeadlineWatch,
  ) {
    this.timeoutMs = check.timeoutMs ?? Number.POSITIVE_INFINITY;
  }

  get watched(): boolean {
    return this.check.timeoutMs !== undefined;
  }

  /** The deadline watch gave up on it. */
  expired(error: StoreUnavailableError): void {
    this.answer(undefined, error);
  }

  /** Answers it, once: with `answer`, or else by rejecting with `error`. */
  answer(answer: ScriptAnswer | undefined, error: unknown): void {
    if (this.done) return;
    this.done = true;
    if (this.watched) this.watch.stop(this);
    if (answer === undefined)
      this.reject(
        error ?? new TollgateError('TOLLGATE_STORE_UNAVAILABLE', 'Redis gave no answer for a check'),
      );
    else this.resolve(answer);
  }
}

interface Group {
  readonly queue: Queued[];
  inFlight: number;
  scheduled: boolean;
}

export class ScriptBatcher {
  readonly #settings: BatcherSettings;
  readonly #groups = new Map<number, Group>();
  readonly #policyArgs = new WeakMap<object, string[]>();
  readonly #overridableArgs = new WeakMap<object, string[]>();

  constructor(settings: BatcherSettings) {
    this.#settings = settings;
  }

  /**
   * Queues a check. It is given up on (rejecting with `StoreUnavailableError`) when it has waited
   * `timeoutMs` to be written, or `timeoutMs` since it was written, with no answer.
   */
  run(check: ScriptCheck): Promise<ScriptAnswer> {
    return new Promise<ScriptAnswer>((resolve, reject) => {
      const queued = new Queued(check, resolve, reject, this.#settings.watch);
      if (queued.watched) queued.watch.add(queued);
      const group = this.#groupOf(check.key);
      group.queue.push(queued);
      if (group.inFlight === 0 && !group.scheduled) {
        group.scheduled = true;
        process.nextTick(this.#flush, group);
      }
    });
  }

  #groupOf(key: string): Group {
    const id = this.#settings.groupOf(key);
    let group = this.#groups.get(id);
    if (group === undefined) {
      group = { queue: [], inFlight: 0, scheduled: false };
      this.#groups.set(id, group);
    }
    return group;
  }

  /** Writes everything queued in the group, in calls of at most `maxBatch` checks. */
  readonly #flush = (group: Group): void => {
    group.scheduled = false;
    const waiting = group.queue.splice(0).filter((queued) => !queued.done);
    for (let start = 0; start < waiting.length; start += this.#settings.maxBatch) {
      this.#send(group, waiting.slice(start, start + this.#settings.maxBatch));
    }
  };

  #send(group: Group, batch: Queued[]): void {
    const { script, keys, args, shapes, single, readAtOnce, texted } = this.#written(batch);
    group.inFlight++;
    this.#settings
      .send(script, keys, args, () => this.#resent(group, batch, args))
      .then(
        (reply) =>
          this.#finished(
            group,
            batch,
            single !== undefined
              ? singleCheckAnswers(reply, single)
              : readAtOnce !== undefined
                ? this.#batchAnswers(reply, readAtOnce, batch.length, texted === true)
                : reply,
            shapes,
            undefined,
          ),
        (error: unknown) => this.#finished(group, batch, undefined, 0, error),
      );
  }

  /** The answers of a batch script that reads its keys at once, to `count` checks like `first`. */
  #batchAnswers(reply: unknown, first: ScriptCheck, count: number, texted: boolean): unknown[] {
    const { answers, unread } = batchCheckAnswers(reply, first, count, texted);
    if (unread !== undefined) this.#settings.keysReadOneByOne(unread);
    return answers;
  }

  /**
   * The arguments of `batch` written again after a NOSCRIPT, which a busy process may read late: as new,
   * its deadlines and those of the checks waiting behind it from now; or, once the watch has given up on
   * one of its checks (its fallback decided, so Redis must not count it), as first written.
   */
  #resent(group: Group, batch: Queued[], args: readonly string[]): readonly string[] {
    if (batch.some((queued) => queued.done)) return args;
    const call = this.#written(batch);
    const nowMs = performance.now();
    for (const waiting of group.queue) if (waiting.watched) this.#settings.watch.restart(waiting, nowMs);
    return call.args;
  }

  /** The script call of `batch`, written now: each check's deadline runs from here. */
  #written(batch: Queued[]) {
    const { watch } = this.#settings;
    const sentAtMs = Date.now();
    const sentOnWatchMs = performance.now(); // the watch's clock: monotonic
    for (const queued of batch) {
      queued.sentAtMs = sentAtMs;
      if (queued.watched) watch.restart(queued, sentOnWatchMs);
    }
    return this.#callOf(batch, sentAtMs);
  }

  /** The script call of `batch`, written at `sentAtMs`, each check given its shape in it. */
  #callOf(
    batch: Queued[],
    sentAtMs: number,
  ): {
    script: LuaScript;
    keys: string[];
    args: string[];
    shapes: number;
    /** The check of a single-check script, whose reply `singleCheckAnswers` reads. */
    single?: ScriptCheck;
    /** The first check of a batch script whose reply `batchCheckAnswers` reads. */
    readAtOnce?: ScriptCheck;
    /** Whether that script answers a check it applied and wrote with the text written. */
    texted?: boolean;
  } {
    const { deadlineArg } = this.#settings;
    const only = batch.length === 1 ? (batch[0] as Queued) : undefined;
    if (only !== undefined && isSingleCheck(only.check)) {
      // The commonest call in a fleet: a script of its own costs Redis a fraction of the settle script.
      const { check } = only;
      only.shape = 1;
      const args = singleCheckArgs(check, deadlineArg(sentAtMs, check.timeoutMs));
      return { script: singleCheckScript(check), keys: [check.key], args, shapes: 1, single: check };
    }
    const checks = batch.map((queued) => queued.check);
    const first = checks[0] as ScriptCheck;
    // Checks alike but for their key, as a process under load sends them: the policy and the shape once.
    const alike = batchCheckCall(checks, deadlineArg(sentAtMs, first.timeoutMs));
    if (alike !== undefined) {
      for (const queued of batch) queued.shape = 1;
      const { script, keys, args, readsAtOnce, textAnswers } = alike;
      const reply = readsAtOnce ? { readAtOnce: first, texted: textAnswers } : {};
      return { script, keys, args, shapes: 1, ...reply };
    }
    const call = new ScriptCall(
      (check) => this.#argsOf(check),
      (check) => deadlineArg(sentAtMs, check.timeoutMs),
    );
    for (const queued of batch) queued.shape = call.add(queued.check);
    return { script: SETTLE_SCRIPT, keys: call.keys, args: call.args(), shapes: call.shapes };
  }

  /** `answers`: the script's, which begin with each of the call's `shapes`' now. */
  #finished(
    group: Group,
    batch: Queued[],
    answers: unknown[] | undefined,
    shapes: number,
    error: unknown,
  ): void {
    group.inFlight--;
    let at = firstAnswerAt(shapes);
    for (const queued of batch) {
      if (answers === undefined || at >= answers.length) {
        queued.answer(undefined, error); // with neither, it rejects: Redis gave no answer
        continue;
      }
      const nowMs = nowOfShape(answers, queued.shape);
      queued.answer({ answers, at, nowMs, sentAtMs: queued.sentAtMs }, undefined);
      at += answerLength(answers, at, queued.check);
    }
    if (group.inFlight === 0 && group.queue.length > 0 && !group.scheduled) this.#flush(group);
  }

  /**
   * A check's `policySetArgs`, made once per set (the ban rule, or else the policies, names it, apart
   * for a limiter that reads overrides).
   */
  #argsOf({ policies, ban, overrides }: ScriptCheck): string[] {
    const setId = ban ?? policies;
    const cache = overrides ? this.#overridableArgs : this.#policyArgs;
    let args = cache.get(setId);
    if (args === undefined) {
      args = policySetArgs(policies, ban, overrides);
      cache.set(setId, args);
    }
    return args;
  }
}
