/**
 * What an adapter calls the setting that decides its client IP, for the warnings that ask users to check
 * it. The adapter gives its own words once; which warning is said, and when, is the core's rule.
 */

/**
 * An adapter's words for its client-IP setting, as its users write it, so that a warning names the
 * setting of the framework in use rather than another's. Given as `AdapterSettings.clientIpSetting`.
 *
 * @example
 * const express: ClientIpSetting = {
 *   name: "app.set('trust proxy', …)",
 *   trustExactly: "app.set('trust proxy', …) with 'loopback', their addresses or their number",
 * };
 */
export interface ClientIpSetting {
  /**
   * The setting that decides the client IP behind a proxy: `"app.set('trust proxy', …)"`, or for an
   * adapter whose app supplies the address, `'the ip option, a function that returns …'`.
   */
  readonly name: string;
  /**
   * How that setting trusts exactly the app's proxies, for `TOLLGATE_PERMISSIVE_TRUST_PROXY` (said only
   * where `RequestAccess.trustsEveryProxy` is given): `"app.maxIpsCount set to their number"`. Default:
   * `name`, by their addresses or their number.
   */
  readonly trustExactly?: string;
  /**
   * The whole text of `TOLLGATE_MISSING_IP` and of the `ClientAddressError` (after the adapter's name),
   * for an adapter whose users are better told where their address comes from than what a framework
   * does: the request's own, not the setting's, is what is missing. Default: the framework gave no
   * client IP; give a key function, or check `name`.
   */
  readonly noAddress?: string;
  /**
   * The whole text of `TOLLGATE_UNTRUSTED_FORWARDED_FOR`, said when `X-Forwarded-For` arrived but does not
   * name the client IP. Default: the app trusts no proxy, so every client behind one shares a bucket;
   * say so with `name`.
   */
  readonly untrustedForwardedFor?: string;
}

/** The words of an adapter that gives none: a third party's, written before adapters gave theirs. */
const NEUTRAL_NAME = "the framework's trusted-proxy setting";

/**
 * An adapter's words for its client-IP setting, with the defaults filled in. Made once per limiter.
 *
 * @example
 * clientIpWords(undefined).name; // "the framework's trusted-proxy setting"
 */
export function clientIpWords(setting: ClientIpSetting | undefined): Required<ClientIpSetting> {
  const name = setting?.name ?? NEUTRAL_NAME;
  return {
    name,
    trustExactly: setting?.trustExactly ?? `${name}, by their addresses or their number`,
    noAddress:
      setting?.noAddress ??
      'the framework gave no client IP and the key function no identity, so the request was refused with ' +
        `an error: give a key function for such requests (a unix socket has no client IP), or check ${name}`,
    untrustedForwardedFor:
      setting?.untrustedForwardedFor ??
      'X-Forwarded-For arrived but the app does not trust proxies, so every client behind a proxy shares ' +
        `one bucket. If the app is behind a proxy, say so with ${name}.`,
  };
}
