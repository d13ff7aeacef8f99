/** One client sending a burst of requests at once, and the tally of what came back. */
import { Agent, get } from 'node:http';
import { UPSTREAM_HEADER } from './proxy.js';

/** What a burst got back. */
export interface BurstTally {
  /** 2xx answers. */
  allowed: number;
  /** 429 answers. */
  limited: number;
  /** Anything else: other statuses and failed connections. */
  failed: number;
  /** 2xx answers per upstream, by the index the proxy reports. */
  allowedByUpstream: number[];
}

/**
 * Sends `count` GET requests to `url` at once, from one client, and counts the answers.
 *
 * @example
 * const tally = await sendBurst('http://127.0.0.1:4000/', 60, 3);
 */
export async function sendBurst(url: string, count: number, upstreamCount: number): Promise<BurstTally> {
  const tally: BurstTally = {
    allowed: 0,
    limited: 0,
    failed: 0,
    allowedByUpstream: Array<number>(upstreamCount).fill(0),
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 20 });
  try {
    const answers = await Promise.allSettled(Array.from({ length: count }, () => getOnce(url, agent)));
    for (const answer of answers) {
      const status = answer.status === 'fulfilled' ? answer.value.status : 0;
      if (status === 429) {
        tally.limited++;
      } else if (status >= 200 && status < 300) {
        tally.allowed++;
        const upstream = answer.status === 'fulfilled' ? answer.value.upstream : undefined;
        if (upstream !== undefined) {
          tally.allowedByUpstream[upstream] = (tally.allowedByUpstream[upstream] ?? 0) + 1;
        }
      } else {
        tally.failed++;
      }
    }
  } finally {
    agent.destroy();
  }
  return tally;
}

function getOnce(url: string, agent: Agent): Promise<{ status: number; upstream: number | undefined }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => {
        const upstream = Number(res.headers[UPSTREAM_HEADER]);
        resolve({ status: res.statusCode ?? 0, upstream: Number.isInteger(upstream) ? upstream : undefined });
      });
      res.on('error', reject);
    }).on('error', reject);
  });
}
