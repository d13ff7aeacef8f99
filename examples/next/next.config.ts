/**
 * The workspace packages are TypeScript sources whose imports name `.js` files, as TypeScript's ESM
 * output does: Next.js compiles them with the app, with webpack told to find `./x.ts` for `./x.js`.
 * (Turbopack, the default bundler of `next build` in Next.js 16, has no such option yet: the scripts
 * build with `--webpack`. An app that installs the published packages, built JavaScript, needs none of this.)
 */
import type { NextConfig } from 'next';

const config: NextConfig = {
  transpilePackages: ['@tollgate/fetch', '@tollgate/core', '@tollgate/example-support'],
  webpack(webpackConfig: { resolve: { extensionAlias?: Record<string, string[]> } }) {
    webpackConfig.resolve.extensionAlias = { '.js': ['.ts', '.js'] };
    return webpackConfig;
  },
};

export default config;
