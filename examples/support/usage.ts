/** The start-up help: curl lines to paste, each showing one limit at work. */

/**
 * The help to print for a server at `baseUrl`. Each command has its own line and its explanation the
 * line above, not a trailing `# …`: zsh would hand that to curl as arguments.
 *
 * @example
 * console.log(usage('http://127.0.0.1:3000'));
 */
export function usage(baseUrl: string): string {
  return [
    'The app-wide limit, 20 a minute per IP: see the RateLimit and RateLimit-Policy headers',
    `  curl -i ${baseUrl}/`,
    'The API limit, 5 a minute per API key (header x-api-key)',
    `  curl -i -H 'x-api-key: demo-key-1' ${baseUrl}/api/widgets`,
    'The login limit, 3 a minute per IP: the 4th attempt is a 429 with Retry-After',
    `  for i in 1 2 3 4; do curl -i -X POST ${baseUrl}/login; echo; done`,
    'Not limited: no RateLimit headers at all',
    `  curl -i ${baseUrl}/health`,
  ].join('\n');
}
