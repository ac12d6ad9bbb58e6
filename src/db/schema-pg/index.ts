// Every PostgreSQL table, one file per aggregate, mirroring src/db/schema/ (same table, column and
// property names, so a row has the same shape on either engine). drizzle-kit reads this file
// (drizzle.pg.config.ts) to generate drizzle-pg/.
export * from "./catalog";
export * from "./licenses";
export * from "./system";
export * from "./releases";
export * from "./usage";
export * from "./floating";
export * from "./idempotency";
export * from "./abuse";
export * from "./coordination";
export * from "./people";
export * from "./offline";
export * from "./webhooks";
export * from "./payments";
