/** The error of a request that no bucket can be chosen for: no identity from the key function, no client IP. */
import { TollgateError } from '../../support/tollgate-error.js';

/**
 * Thrown into the framework's error handling (a 500 by default) for a request with neither an identity
 * from the key function nor a client IP. Such requests are refused rather than limited together: one
 * bucket shared by every one of them would let one client lock all the others out. A server on a unix
 * socket has no client IP: give it a key function. A {@link TollgateError}.
 *
 * @example
 * app.use((error, req, res, next) => {
 *   if (error instanceof ClientAddressError) return res.status(400).send('who are you?');
 *   next(error);
 * });
 */
export class ClientAddressError extends TollgateError {
  /** Always `'TOLLGATE_NO_CLIENT_ADDRESS'`. */
  declare readonly code: 'TOLLGATE_NO_CLIENT_ADDRESS';

  constructor(message: string) {
    super('TOLLGATE_NO_CLIENT_ADDRESS', message);
    this.name = 'ClientAddressError';
  }
}
