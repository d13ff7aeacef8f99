/** The registry's `workerd` package, which ships no types: its main module names the binary. */
declare module 'workerd' {
  /** The path of the `workerd` binary for this platform. */
  const binary: string;
  export default binary;
  /** The newest compatibility date this release supports. */
  export const compatibilityDate: string;
}
