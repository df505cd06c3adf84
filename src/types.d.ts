declare module "*.sql" {
  const text: string;
  export default text;
}

// Files of pinned packages built into the binary, imported as their paths (the API reference's assets).
declare module "swagger-ui-dist/*.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/*.css" {
  const path: string;
  export default path;
}
