// Which harness routes the app serves right now: reliability tests that need a feature skip (loudly)
// while it is absent, and run once it is merged.
import { createTestApp } from "../../support/app";
import { missingFromTable, type RouteName } from "../../../bench/lib/api";

let table: string[] | null = null;

export async function appRouteTable(): Promise<string[]> {
  if (!table) {
    const t = await createTestApp();
    table = (await t.app.routes()).map((r) => `${r.method} ${r.path}`);
    await t.close();
  }
  return table;
}

/** Missing route names; prints a warning naming them so a skip is never silent. */
export async function missingRoutes(suite: string, names: RouteName[]): Promise<RouteName[]> {
  const missing = missingFromTable(await appRouteTable(), names);
  if (missing.length) console.warn(`[${suite}] SKIPPED: route missing: ${missing.join(", ")}`);
  return missing;
}
