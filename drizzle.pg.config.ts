import { defineConfig } from "drizzle-kit";

// PostgreSQL migrations (DATABASE_URL=postgres://…), embedded into the executable by
// scripts/embed-migrations.ts like the SQLite ones in drizzle/.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema-pg/index.ts",
  out: "./drizzle-pg",
});
