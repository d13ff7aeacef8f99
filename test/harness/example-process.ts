/** An example app started as its `pnpm start` starts it: `node --import tsx index.ts` in its folder. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Starts `examples/<example>/index.ts` with `env` added to this process's, and resolves with what it
 * printed once that includes `readyText` (the line it prints when it listens).
 *
 * @example
 * const { child, banner } = await startExample('nestjs', 'curl -i http', { PORT: '3010' });
 */
export async function startExample(
  example: string,
  readyText: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; banner: string }> {
  const cwd = fileURLToPath(new URL(`../../examples/${example}/`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', 'index.ts'], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let banner = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      banner += chunk.toString();
      if (banner.includes(readyText)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the example exited (${code}) before listening`)));
  });
  return { child, banner };
}
