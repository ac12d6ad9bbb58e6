import type { RouteFixtures } from "./types";

const fixtures: RouteFixtures = {
  "GET /api/v1/admin/products/:id/signing-keys": {
    scopes: ["releases:write"],
    build: ({ product }) => ({ params: { id: product.id } }),
  },
  "POST /api/v1/admin/products/:id/signing-keys/rotate": {
    scopes: [],
    build: ({ product }) => ({ params: { id: product.id } }),
  },
};

export default fixtures;
