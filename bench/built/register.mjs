/**
 * Loaded with `--import` by the bench's child processes, after tsx: Tollgate's packages then load from
 * their built `dist`, as users install them, not from their TypeScript sources through tsx (whose
 * transform adds work the published code does not do). The peers load from their published JS alike.
 * With TOLLGATE_BENCH_CHECKOUT set (see built-packages.ts), they load from that checkout's `dist` instead.
 */
import { register } from 'node:module';

register(new URL('./hooks.mjs', import.meta.url), {
  data: { checkout: process.env.TOLLGATE_BENCH_CHECKOUT },
});
