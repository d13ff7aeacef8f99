/** What the concurrency interceptor throws for a request it can no longer answer: the client left, or the head is out. */
import { ForbiddenException } from '@nestjs/common';
import { TollgateError } from '@tollgate/core';

/**
 * Thrown by `concurrencyLimit()` for a request whose client went away (or whose head was sent) before it
 * got a slot, so that Nest stops the request. A `ForbiddenException`, so Nest's filters answer it
 * quietly (the answer reaches nobody); a `TollgateError` by its `code`, `'TOLLGATE_ALREADY_ANSWERED'`.
 *
 * @example
 * throw new AnsweredAlreadyException();
 */
export class AnsweredAlreadyException extends ForbiddenException {
  /** Always `'TOLLGATE_ALREADY_ANSWERED'`. */
  get code(): 'TOLLGATE_ALREADY_ANSWERED' {
    return 'TOLLGATE_ALREADY_ANSWERED';
  }

  /** The entry of docs/errors.md for this code. */
  get help(): string {
    return TollgateError.helpFor(this.code);
  }
}
