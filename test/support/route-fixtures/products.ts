import type { RouteFixtures } from "./types";
import { newId } from "../../../src/shared/ids";

// Product reads are open to licenses:write and releases:write keys (they need product ids to work).
const READ = ["licenses:write", "releases:write"] as const;

export default {
  "GET /api/v1/admin/products": {
    scopes: [...READ],
    // The product_id filter is what a bound key on another product is refused on.
    build: ({ product }) => ({ query: { product_id: product.id } }),
  },
  "POST /api/v1/admin/products": {
    scopes: [],
    // Creating a product is system-wide: a bound key cannot mint products.
    productScoped: false,
    build: () => ({ body: { name: "Fixture product", slug: `fixture-${newId().slice(-12)}` } }),
  },
  "GET /api/v1/admin/products/:id": {
    scopes: [...READ],
    build: ({ product }) => ({ params: { id: product.id } }),
  },
  "PATCH /api/v1/admin/products/:id": {
    scopes: [],
    build: ({ product }) => ({ params: { id: product.id }, body: { name: "Renamed product", minimum_supported_version: "1.0.0" } }),
  },
  "DELETE /api/v1/admin/products/:id": {
    scopes: [],
    build: ({ product }) => ({ params: { id: product.id } }),
  },
} satisfies RouteFixtures;
