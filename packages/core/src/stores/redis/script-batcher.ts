/**
 * Sends checks to Redis in batches that Tollgate controls: a check is written at once when nothing is on
 * its way to that slot, and checks that arrive while a batch is on its way go together in the next one,
 * as one script call. Redis pays its per-command cost once per batch, and — unlike a client's own
 * auto-pipelining — each check's deadline starts when it is really written.
 */
import type { BanRule } from '../../algorithms/ban/ban.js';
import { ALGORITHMS } from '../../algorithms/registry.js';
import type { DeadlineWatch, Watched } from '../../deadline-watch.js';
import type { ResolvedPolicy } from '../../policy.js';
import type { BucketMode } from '../../store.js';
import type { StoreUnavailableError } from '../../store-error.js';
import { EXPIRED, REFUSED } from './scripts.js';

/** Runs the batch script with these keys and arguments; resolves to its answers, one after another. */
export type SendBatch = (keys: string[], args: string[]) => Promise<unknown[]>;

/** One check for the script (see `script.lua.ts` for what each field means there). */
export interface ScriptCheck {
  readonly key: string;
  readonly policies: readonly ResolvedPolicy[];
  /** The limiter's ban, if it has one. */
  readonly ban: BanRule | undefined;
  /** The store's clock, or `''` for the server's. */
  readonly nowArg: string;
  readonly cost: number;
  readonly mode: BucketMode;
  readonly timeoutMs: number | undefined;
}

/**
 * What the script answered for a check: its fields from `answers[at]` on (see `script.lua.ts`), the time
 * it was decided at, and when it was written (`Date.now()`).
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
}

/**
 * A check waiting for its answer, and, when it has a timeout, what the deadline watch watches. A class,
 * its fields all set in the constructor: V8 gives an object literal spread from the check and then
 * extended a slow dictionary shape, which cost a sixth of a check.
 */
class Queued implements Watched {
  sentAtMs = 0;
  /** Its kind in the script call it went in (1-based). */
  kind = 0;
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
    this.settle(undefined, error);
  }

  /** Answers it, once: with `answer`, or else by rejecting with `error`. */
  settle(answer: ScriptAnswer | undefined, error: unknown): void {
    if (this.done) return;
    this.done = true;
    if (this.watched) this.watch.stop(this);
    if (answer === undefined) this.reject(error ?? new Error('Redis gave no answer for a check'));
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
    const { watch, deadlineArg, send } = this.#settings;
    const sentAtMs = Date.now();
    const sentOnWatchMs = performance.now(); // the watch's clock: monotonic
    const call = new ScriptCall(
      (check) => this.#argsOf(check.policies, check.ban),
      (check) => deadlineArg(sentAtMs, check.timeoutMs),
    );
    for (const queued of batch) {
      queued.kind = call.add(queued.check);
      queued.sentAtMs = sentAtMs;
      if (queued.watched) watch.restart(queued, sentOnWatchMs);
    }
    group.inFlight++;
    send(call.keys, call.args()).then(
      (answers) => this.#finished(group, batch, answers, call.kinds, undefined),
      (error: unknown) => this.#finished(group, batch, undefined, 0, error),
    );
  }

  /** `answers`: the script's, which begin with each of the call's `kinds`' now. */
  #finished(
    group: Group,
    batch: Queued[],
    answers: unknown[] | undefined,
    kinds: number,
    error: unknown,
  ): void {
    group.inFlight--;
    let at = kinds;
    for (const queued of batch) {
      if (answers === undefined || at >= answers.length) {
        queued.settle(undefined, error); // with neither, it rejects: Redis gave no answer
        continue;
      }
      const nowMs = Number(answers[queued.kind - 1]);
      queued.settle({ answers, at, nowMs, sentAtMs: queued.sentAtMs }, undefined);
      at += answerLength(Number(answers[at]), queued.check);
    }
    if (group.inFlight === 0 && group.queue.length > 0 && !group.scheduled) this.#flush(group);
  }

  /** `n, code, fields, limit, windowMs, capacityUnits, …, banAfter, banMs`: a policy set as the script reads it. */
  #argsOf(policies: readonly ResolvedPolicy[], ban: BanRule | undefined): string[] {
    const setId = ban ?? policies;
    let args = this.#policyArgs.get(setId);
    if (args === undefined) {
      args = [String(policies.length)];
      for (const p of policies) {
        const { code, fields } = ALGORITHMS[p.algorithm];
        args.push(String(code), String(fields), String(p.limit), String(p.windowMs), String(p.capacityUnits));
      }
      args.push(String(ban?.after ?? 0), String(ban?.durationMs ?? 0));
      this.#policyArgs.set(setId, args);
    }
    return args;
  }
}

/**
 * The keys and arguments of one script call, check by check: each policy set, and each kind of check
 * (what checks share but their key), is written once, and each check names its kind.
 */
class ScriptCall {
  readonly keys: string[] = [];
  // A set is the policies and the ban of one limiter: the ban rule, made once per limiter, names it.
  readonly #sets = new Map<object, number>();
  readonly #setArgs: string[] = [];
  readonly #kinds = new Map<string, number>();
  readonly #kindArgs: string[] = [];
  readonly #checkArgs: string[] = [];
  readonly #setArgsOf: (check: ScriptCheck) => string[];
  readonly #deadlineOf: (check: ScriptCheck) => string;
  #previous: ScriptCheck | undefined;
  #kind = 0;
  #kindArg = '';

  /** `setArgsOf`: a check's policy set as the script reads it; `deadlineOf`: its deadline argument. */
  constructor(setArgsOf: (check: ScriptCheck) => string[], deadlineOf: (check: ScriptCheck) => string) {
    this.#setArgsOf = setArgsOf;
    this.#deadlineOf = deadlineOf;
  }

  /** How many kinds of check the call has so far. */
  get kinds(): number {
    return this.#kinds.size;
  }

  /** Adds a check; its kind (1-based). */
  add(check: ScriptCheck): number {
    // Most of a batch is one kind, and checks of one kind mostly come one after another.
    if (this.#previous === undefined || !sameKind(check, this.#previous)) {
      this.#kind = this.#kindOf(check);
      this.#kindArg = String(this.#kind);
      this.#previous = check;
    }
    this.keys.push(check.key);
    this.#checkArgs.push(this.#kindArg);
    return this.#kind;
  }

  /** `S, sets…, K, kinds…, checks…`, as the script reads them (no checks' kinds when there is one kind). */
  args(): string[] {
    const kinds = this.#kinds.size;
    const args = [String(this.#sets.size), ...this.#setArgs, String(kinds), ...this.#kindArgs];
    if (kinds > 1) for (const kind of this.#checkArgs) args.push(kind);
    return args;
  }

  #kindOf(check: ScriptCheck): number {
    const setId = check.ban ?? check.policies;
    let set = this.#sets.get(setId);
    if (set === undefined) {
      set = this.#sets.size + 1;
      this.#sets.set(setId, set);
      this.#setArgs.push(...this.#setArgsOf(check));
    }
    const fields = [String(set), check.nowArg, this.#deadlineOf(check), String(check.cost), check.mode];
    const id = fields.join(' ');
    let kind = this.#kinds.get(id);
    if (kind === undefined) {
      kind = this.#kinds.size + 1;
      this.#kinds.set(id, kind);
      this.#kindArgs.push(...fields);
    }
    return kind;
  }
}

/** Whether two checks differ in nothing but their key, so the script may read them as one kind. */
function sameKind(a: ScriptCheck, b: ScriptCheck): boolean {
  return (
    a.policies === b.policies &&
    a.ban === b.ban &&
    a.nowArg === b.nowArg &&
    a.timeoutMs === b.timeoutMs &&
    a.cost === b.cost &&
    a.mode === b.mode
  );
}

/** How many fields a check's answer has, given its first (see `script.lua.ts`). */
function answerLength(status: number, { policies, ban }: ScriptCheck): number {
  if (status === EXPIRED) return 1;
  if (status === REFUSED) return 2;
  let fields = ban === undefined ? 1 : 2; // applied, and when the ban ends
  for (const policy of policies) fields += ALGORITHMS[policy.algorithm].fields;
  return fields;
}
