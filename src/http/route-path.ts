// The router ignores one trailing slash ("/x/" and "/x" are the same route); so do body policies
// and the 405 answers.
export function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
