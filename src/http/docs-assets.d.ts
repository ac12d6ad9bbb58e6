// Files imported `with { type: "file" }` (src/http/docs-ui.ts): the import is the file's path.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
