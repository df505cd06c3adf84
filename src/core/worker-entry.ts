// Worker threads are started from a module path. From source that is the file itself; in the
// compiled binary, where a worker module is built in as an extra entrypoint (see the Makefile), it
// is the module's path under the entrypoints' common root, the project root.
export function workerEntry(fromRoot: string): string {
  return import.meta.url.includes("/$bunfs/")
    ? `./${fromRoot}`
    : new URL(`../../${fromRoot}`, import.meta.url).href;
}
