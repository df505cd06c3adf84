declare module "*.sql" {
  const text: string;
  export default text;
}

// Files of pinned packages built into the binary as text (the API reference's assets).
declare module "swagger-ui-dist/*.js" {
  const text: string;
  export default text;
}
declare module "swagger-ui-dist/*.css" {
  const text: string;
  export default text;
}
