// Contract for the admin route-table auth test (test/http/auth-matrix.test.ts).
// Every admin route in `await app.routes()` MUST have an entry, keyed "METHOD /api/v1/admin/path/:param",
// in some test/support/route-fixtures/<module>.ts file (default export). A route without one fails
// the test, so no new route can skip the auth matrix.
import type { TestApp } from "../app";
import type { Product } from "../../../src/modules/products/repo";
import type { Scope } from "../../../src/shared/actor";

export interface RouteFixtureContext {
  t: TestApp;
  /** The product the fixture's resources belong to. */
  product: Product;
}

export interface BuiltRequest {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

export interface RouteFixture {
  /** Scopes (besides admin) this route accepts; [] means admin only. */
  scopes: Scope[];
  /**
   * Builds a fresh, valid request against resources of ctx.product (called once per matrix case,
   * so destructive routes get new resources each time). An unbound admin key must get a 2xx.
   */
  build(ctx: RouteFixtureContext): BuiltRequest | Promise<BuiltRequest>;
  /**
   * false for system-wide routes a product-bound key may never use (they answer 403
   * PRODUCT_SCOPE_MISMATCH for any bound key). Default true: resource belongs to ctx.product.
   */
  productScoped?: boolean;
}

export type RouteFixtures = Record<string, RouteFixture>;
