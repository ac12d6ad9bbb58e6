import { defineConfig } from "drizzle-kit";

// Migrations are generated here and embedded into the executable by scripts/embed-migrations.ts.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/index.ts",
  out: "./drizzle",
});
