/** The base of every error Tollgate throws on purpose: a stable `code`, and where that code is explained. */

/**
 * Every code a {@link TollgateError} carries. Each has an entry in docs/errors.md saying what it means
 * and what to do; `error.help` names that entry.
 */
export type TollgateErrorCode =
  | 'TOLLGATE_INVALID_OPTION'
  | 'TOLLGATE_INVALID_ARGUMENT'
  | 'TOLLGATE_NO_CLIENT_ADDRESS'
  | 'TOLLGATE_RATE_LIMITED'
  | 'TOLLGATE_COST_EXCEEDS_CAPACITY'
  | 'TOLLGATE_STORE_UNAVAILABLE'
  | 'TOLLGATE_STORE_REFUSED'
  | 'TOLLGATE_ALREADY_ANSWERED'
  | 'TOLLGATE_INTERNAL';

/** The page that explains every code, one heading (and so one anchor) per code. */
const ERRORS_PAGE = 'docs/errors.md';

/** Tollgate's codes: the family's mark, which copies of the package loaded side by side share. */
const TOLLGATE_CODE = /^TOLLGATE_[A-Z0-9_]+$/;

/**
 * Where `code` is explained: its entry in the errors page of Tollgate's repository.
 *
 * @example
 * helpFor('TOLLGATE_INVALID_OPTION'); // 'docs/errors.md#tollgate_invalid_option'
 */
export function helpFor(code: string): string {
  return `${ERRORS_PAGE}#${code.toLowerCase()}`;
}

/**
 * The base of the errors Tollgate throws on purpose. Each has a stable `code` (`'TOLLGATE_…'`), for
 * error handlers and logs to branch on, and `help`, the entry of docs/errors.md that says what the code
 * means and what to do. Messages may change between versions; codes do not.
 *
 * `error instanceof TollgateError` is true for every member of the family, whatever class it extends:
 * - `ClientAddressError`, `RateLimitError`, `StoreUnavailableError`, and errors thrown as this class
 *   itself, extend it;
 * - `TollgateOptionError` (a bad option) extends `TypeError`, and a bad argument or an out-of-range
 *   option is a `TypeError` or `RangeError` too, as JavaScript's own checks are, so that
 *   `catch (e) { if (e instanceof TypeError) … }` keeps working; NestJS's `RateLimitException` extends
 *   Nest's `HttpException`, so that Nest's filters answer it.
 *
 * JavaScript gives a class one parent, so the check is by mark, not by prototype: `instanceof
 * TollgateError` asks whether the value is an `Error` whose `code` is a Tollgate code. That also holds
 * for errors from another copy of `@tollgate/core` in the same process (its ESM and CommonJS builds, or
 * two versions), where a prototype check would say no. (`instanceof` on a subclass, such as
 * `RateLimitError`, is the ordinary prototype check.)
 *
 * Not Tollgate errors: what a store's client throws (carried as `cause` of a `StoreUnavailableError`),
 * and what your own callbacks throw, which Tollgate passes on or logs as it is.
 *
 * `name` stays the JavaScript kind (`'TypeError'`, or `'Error'` for this class itself) or the subclass's
 * name; `code` says which error it is.
 *
 * @example
 * app.use((error, req, res, next) => {
 *   if (error instanceof TollgateError) log.warn({ code: error.code, help: error.help }, error.message);
 *   next(error);
 * });
 */
export class TollgateError extends Error {
  /** Which error this is; stable across versions. Each code is explained at {@link TollgateError.help}. */
  readonly code: TollgateErrorCode;

  constructor(code: TollgateErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  /** The entry of docs/errors.md for this error's code: what it means and what to do. */
  get help(): string {
    return helpFor(this.code);
  }

  /**
   * Where `code` is explained, as `help` names it: for classes that cannot extend this one (a
   * framework's exception) and join the family by their `code`.
   *
   * @example
   * TollgateError.helpFor('TOLLGATE_RATE_LIMITED'); // 'docs/errors.md#tollgate_rate_limited'
   */
  static helpFor(code: TollgateErrorCode): string {
    return helpFor(code);
  }

  /** A Tollgate error of any class: an `Error` whose `code` is a Tollgate code (see the class's doc). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses inherit this method: for them (`this` is the class right of `instanceof`), the ordinary
    // prototype check.
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class asked about, maybe a subclass
    if (this !== TollgateError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return isTollgateError(value);
  }
}

/** Whether `value` is an `Error` that carries a Tollgate code. */
function isTollgateError(value: unknown): boolean {
  if (!(value instanceof Error)) return false;
  const { code } = value as { code?: unknown };
  return typeof code === 'string' && TOLLGATE_CODE.test(code);
}

/**
 * Makes `kind`'s instances Tollgate errors that answer `code`, for a class whose parent is not
 * {@link TollgateError} (a `TypeError`, a framework's exception). `code` goes on the prototype,
 * enumerable, so loggers that list an error's fields show it, while the instance's own fields stay as
 * its parent's (test runners compare errors by their own fields); `help` beside it.
 *
 * @example
 * export class TollgateOptionError extends TypeError {}
 * joinFamily(TollgateOptionError, 'TOLLGATE_INVALID_OPTION');
 */
export function joinFamily(kind: abstract new (...args: never[]) => Error, code: TollgateErrorCode): void {
  Object.defineProperty(kind.prototype, 'code', { value: code, enumerable: true });
  Object.defineProperty(kind.prototype, 'help', { get: () => helpFor(code) });
}

/**
 * Puts `code` in `error`'s stack header, `TypeError [TOLLGATE_INVALID_OPTION]: …`, as Node.js does for
 * its own coded errors, so a crash log says which code to look up. The name is changed only while V8
 * writes the header (it does so on the first read of `stack`); `name` and `String(error)` stay as the
 * parent's.
 */
export function codeInStack(error: Error, code: TollgateErrorCode): void {
  const { name } = error;
  error.name = `${name} [${code}]`;
  void error.stack;
  delete (error as { name?: string }).name;
}
