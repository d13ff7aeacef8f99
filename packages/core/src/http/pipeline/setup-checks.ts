/**
 * Checks of how the app is set up, made on live requests: each warns once (see the warning codes), and a
 * check with nothing left to say stops costing anything.
 */
import { isIPv6 } from 'node:net';
import type { Warnings } from '../../support/warnings.js';
import { ipIdentity } from '../identity/client-ip.js';
import { type ClientIpSetting, clientIpWords } from '../identity/client-ip-setting.js';
import type { RequestAccess } from '../identity/request-keys.js';

/** An identity that may hide an IPv6 address behind a prefix of letters: `ip:2001:db8::1`, `client=…`. */
const LETTER_PREFIX = /^[A-Za-z_-]+[:=]/;

/**
 * One request in this many is marked to find a limiter that checks requests twice. Odd: the checks of a
 * limiter mounted twice alternate, first and second, and an even count could land on the second ones only.
 */
const MARK_EVERY = 31;

/** The setup checks of one limiter. */
export class SetupChecks<Req> {
  readonly #access: RequestAccess<Req>;
  readonly #warnings: Warnings;
  /**
   * The mark this limiter leaves on the requests it checks, while a second check of one is still worth
   * a warning: a hidden symbol property, cheaper than a WeakSet (whose entries the garbage collector
   * must trace as ephemerons). Gone, with its cost, once the warning is said or switched off.
   */
  #mark: symbol | undefined;
  /** Requests seen; one in {@link MARK_EVERY} is marked, as a new property costs each request a new shape. */
  #seen = 0;
  #forwardedForDue: boolean;
  #trustProxyDue: boolean;
  #ipv6KeyDue: boolean;
  /** The adapter's words for its client-IP setting, which the proxy warnings name. */
  readonly #setting: Required<ClientIpSetting>;

  /** `setting`: the adapter's words for its client-IP setting (`AdapterSettings.clientIpSetting`). */
  constructor(access: RequestAccess<Req>, warnings: Warnings, setting?: ClientIpSetting) {
    this.#access = access;
    this.#warnings = warnings;
    this.#setting = clientIpWords(setting);
    this.#mark = warnings.due('TOLLGATE_DOUBLE_COUNT') ? Symbol('tollgate.checked') : undefined;
    this.#forwardedForDue = warnings.due('TOLLGATE_UNTRUSTED_FORWARDED_FOR');
    this.#trustProxyDue =
      warnings.due('TOLLGATE_PERMISSIVE_TRUST_PROXY') && access.trustsEveryProxy !== undefined;
    this.#ipv6KeyDue = warnings.due('TOLLGATE_UNGROUPED_IPV6_KEY');
  }

  /** The checks of a request about to be charged. */
  request(request: Req): void {
    if (this.#mark !== undefined) this.#countedOnce(request);
    if (this.#trustProxyDue) this.#trustProxy(request);
    if (this.#forwardedForDue) this.#forwardedFor(request);
  }

  /** The checks of the identity a key function returned. */
  identity(identity: string): void {
    if (this.#ipv6KeyDue) this.#ipv6Key(identity);
  }

  /** One request, charged twice by one limiter (mounted twice on one path), is charged twice: say so. */
  #countedOnce(request: Req): void {
    if (typeof request !== 'object' || request === null) return;
    const marked = request as Record<symbol, true>;
    const mark = this.#mark as symbol;
    if (marked[mark] !== true) {
      // Not enumerable: spreads and deep comparisons of the request never see it. Reflect: a frozen
      // request is left unmarked rather than failing the check. A limiter mounted twice checks every
      // request twice, so marking some of them finds it within a few dozen requests.
      if (this.#seen++ % MARK_EVERY === 0)
        Reflect.defineProperty(marked, mark, { value: true, configurable: true });
      return;
    }
    this.#mark = undefined;
    this.#warnings.once(
      'TOLLGATE_DOUBLE_COUNT',
      'one request was checked twice by the same limiter, and charged twice: is it mounted twice on the path ' +
        '(app-wide and on a router, say)? Use it once, or give the second place a limiter of its own.',
    );
  }

  #trustProxy(request: Req): void {
    this.#trustProxyDue = false;
    if (!this.#access.trustsEveryProxy?.(request)) return;
    this.#warnings.once(
      'TOLLGATE_PERMISSIVE_TRUST_PROXY',
      'the app trusts every proxy, so the client IP is whatever a client writes into X-Forwarded-For and ' +
        `any client can get a fresh bucket per request. Trust exactly your proxies: ${this.#setting.trustExactly}.`,
    );
  }

  /** Warns if X-Forwarded-For arrives but the framework ignored it (no trusted proxy). */
  #forwardedFor(request: Req): void {
    const access = this.#access;
    const forwardedFor = access.header(request, 'x-forwarded-for');
    if (forwardedFor === undefined) return; // first: the framework's IP can cost more than a header
    const ip = access.ip(request);
    // No address at all fails the request, and TOLLGATE_MISSING_IP says why: no bucket is shared here.
    if (ip === undefined || ip !== access.socketIp(request)) return;
    // A client on the proxy's own address (a local setup) forwards the very address the socket shows:
    // the framework may well trust the proxy, so there is nothing to warn about.
    const clientIp = ipIdentity(ip, false);
    if (forwardedFor.split(',').some((hop) => ipIdentity(hop.trim(), false) === clientIp)) return;
    this.#forwardedForDue = false;
    this.#warnings.once('TOLLGATE_UNTRUSTED_FORWARDED_FOR', this.#setting.untrustedForwardedFor);
  }

  /**
   * A key like `(req) => req.ip` keys each IPv6 address alone, and one client holds billions of them
   * (a /64 at least): byIp() groups them by subnet. `byIp`'s own identities (`ip:…`) name a subnet, or
   * a single address only when `ipv6Subnet: false` asked for it. An IPv4 address written as IPv6
   * (`::ffff:10.0.0.1`) is one client, not a subnet.
   */
  #ipv6Key(identity: string): void {
    if (!identity.includes(':') || identity.startsWith('ip:')) return;
    const address = identity.replace(LETTER_PREFIX, '');
    if (!isIPv6(address) || ipIdentity(address, false)?.includes('.')) return;
    this.#ipv6KeyDue = false;
    this.#warnings.once(
      'TOLLGATE_UNGROUPED_IPV6_KEY',
      'the key function returned a whole IPv6 address, so one client can rotate through the billions of ' +
        'addresses of its subnet and get a fresh bucket for each. Key by byIp() (IPv6 grouped by /56), or ' +
        'group the address yourself with ipIdentity(ip, 56).',
    );
  }
}
