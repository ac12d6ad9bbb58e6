// Every table, one file per aggregate. drizzle-kit reads this file to generate migrations.
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
