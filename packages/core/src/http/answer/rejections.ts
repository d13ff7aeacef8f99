/**
 * The default answers to refused requests, built once per distinct answer: a client hammering while
 * refused gets the same problem details many times a second, and serializing them again each time cost
 * more than the rest of a deny-cache refusal.
 */
import type { Decision } from '../../model/decision.js';
import { retryAfterSeconds } from './headers.js';
import type { RateLimitRejection } from './outcome.js';
import { PROBLEM_JSON, problemDetails } from './problem.js';

/** Distinct answers kept; past this many they are all dropped (a rebuild costs only one serialization). */
const MAX_ANSWERS = 256;

/** The problem-details answers of one limiter. */
export class ProblemAnswers {
  readonly #answers = new Map<string, RateLimitRejection>();
  /** The last answer and its decision: the deny cache answers a hammering client with one decision. */
  #last: { decision: Decision; status: number; answer: RateLimitRejection } | undefined;

  /** The answer to a refused decision, with `status` (429, 403, or the `statusCode` option). */
  answer(decision: Decision, status: number): RateLimitRejection {
    const last = this.#last;
    if (last?.decision === decision && last.status === status) return last.answer;
    const key = answerKey(decision, status);
    let answer = this.#answers.get(key);
    if (answer === undefined) {
      answer = rejectionOf(status, PROBLEM_JSON, JSON.stringify(problemDetails(decision, status)));
      if (this.#answers.size >= MAX_ANSWERS) this.#answers.clear();
      this.#answers.set(key, answer);
    }
    this.#last = { decision, status, answer };
    return answer;
  }
}

/** A rejection with its body as bytes too, frozen: it may be shared by many requests. */
export function rejectionOf(status: number, contentType: string, body: string): RateLimitRejection {
  return Object.freeze({ status, contentType, body, bytes: Buffer.from(body) });
}

/**
 * Everything `problemDetails` reads of a decision: two decisions with the same key get the same body.
 * Policies are named, not numbered: one HTTP limiter may decide with different policies per request.
 */
function answerKey(decision: Decision, status: number): string {
  const { decidedBy } = decision;
  let key = `${status}|${decision.reason}|${retryAfterSeconds(decision)}|${decision.cost}|${decidedBy.policy}|${decidedBy.capacity}`;
  for (const policy of decision.policies) {
    const wait = policy.retryAfterMs === 0 ? '0' : policy.retryAfterMs === undefined ? 'never' : 'later';
    key += `|${policy.policy}:${wait}`;
  }
  return key;
}

/** What {@link endWithRejection} writes to: a Node.js `ServerResponse`. */
export interface WritableNodeResponse {
  statusCode: number;
  setHeader(name: string, value: string | number): unknown;
  end(body: string): unknown;
}

/**
 * Ends a Node.js response with a refusal, whose body and content type are ready to send. Not a
 * framework's `send`: for a string it would add a charset that `application/problem+json` lacks, and for
 * bytes compute an ETag (which means nothing on a 429), and Node writes bytes apart from the head. A
 * string given to `end` goes with the head in one chunk: in a server answering only such 429s, a fifth
 * less CPU each.
 *
 * @example
 * // in an adapter's ResponseAccess for Node.js responses
 * send: (res, rejection) => endWithRejection(res, rejection),
 */
export function endWithRejection(
  res: WritableNodeResponse,
  { status, contentType, body, bytes }: RateLimitRejection,
): unknown {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', bytes.length);
  return res.end(body);
}
