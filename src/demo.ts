// `keyward demo`: loads a demo product, plans, licenses and signed releases through the same services
// the API uses, so a newcomer can try every public endpoint at once. Running it again changes nothing
// and reports what is there.
import type { Deps } from "./deps";
import { SYSTEM_ACTOR } from "./shared/actor";
import { DAY } from "./shared/clock";
import { createProduct } from "./modules/products/service";
import { createPlan } from "./modules/plans/service";
import { issueLicense, revealLicenseKey } from "./modules/licenses/service";
import { addArtifact, createRelease, finalizeArtifact, publishRelease } from "./modules/releases/service";
import { createApiKey } from "./modules/api-keys/service";
import type { Platform } from "./modules/releases/repo";
import { stagingKeyFor } from "./modules/releases/domain";

export const DEMO_SLUG = "demo-app";
const PRO_EMAIL = "pro@demo.keyward.test";
const TRIAL_EMAIL = "trial@demo.keyward.test";
const FLOATING_EMAIL = "floating@demo.keyward.test";

export interface DemoSummary {
  created: boolean;
  productId: string;
  slug: string;
  adminApiKey: string | null;
  licenses: { plan: string; email: string; key: string }[];
  releases: string[];
}

const RELEASES: { version: string; channel: "stable" | "beta"; notes: string }[] = [
  { version: "1.0.0", channel: "stable", notes: "First release." },
  { version: "1.1.0", channel: "stable", notes: "Faster start-up; PDF export." },
  { version: "1.2.0-beta.1", channel: "beta", notes: "Preview of the new editor." },
];
const PLATFORMS: Platform[] = ["linux-x64", "darwin-arm64", "windows-x64"];

async function existing(deps: Deps, productId: string): Promise<DemoSummary> {
  const licenses: DemoSummary["licenses"] = [];
  for (const email of [PRO_EMAIL, TRIAL_EMAIL, FLOATING_EMAIL]) {
    for (const l of (await deps.repos.licenses.list({ productId, email, limit: 1 })).items) {
      licenses.push({ plan: (await deps.repos.plans.findById(l.planId))?.name ?? l.planId, email, key: revealLicenseKey(deps, l) });
    }
  }
  return { created: false, productId, slug: DEMO_SLUG, adminApiKey: null, licenses, releases: RELEASES.map((r) => r.version) };
}

export async function loadDemo(deps: Deps): Promise<DemoSummary> {
  const found = await deps.repos.products.findBySlug(DEMO_SLUG);
  if (found) return await existing(deps, found.id);

  const actor = SYSTEM_ACTOR;
  const now = deps.clock.now();
  const product = await createProduct(deps, actor, {
    name: "Demo App",
    slug: DEMO_SLUG,
    distribution: "open",
    minimumSupportedVersion: "1.0.0",
    minimumSupportedMessage: "Versions before 1.0.0 are no longer supported; please update.",
  });
  const pro = await createPlan(deps, actor, {
    productId: product.id,
    name: "Pro",
    licenseType: "perpetual",
    maxActivations: 3,
    features: [
      { name: "export_pdf", valueType: "bool", value: "true" },
      { name: "max_projects", valueType: "int", value: "50" },
      { name: "edition", valueType: "string", value: "pro" },
      { name: "ai_credits", valueType: "quota", quotaLimit: 100, quotaPeriod: "monthly" },
    ],
  });
  const trial = await createPlan(deps, actor, {
    productId: product.id,
    name: "Trial",
    licenseType: "trial",
    trialDays: 14,
    maxActivations: 1,
    features: [{ name: "export_pdf", valueType: "bool", value: "false" }],
  });
  const floating = await createPlan(deps, actor, {
    productId: product.id,
    name: "Floating (2 seats)",
    licenseType: "subscription",
    floating: true,
    maxActivations: 2,
    floatingTimeout: 30,
  });
  const licenses: DemoSummary["licenses"] = [];
  for (const { plan, email, supportUntil } of [
    { plan: pro.plan, email: PRO_EMAIL, supportUntil: new Date(now.getTime() + 365 * DAY) },
    { plan: trial.plan, email: TRIAL_EMAIL, supportUntil: null },
    { plan: floating.plan, email: FLOATING_EMAIL, supportUntil: null },
  ]) {
    const { key } = await issueLicense(deps, actor, { productId: product.id, planId: plan.id, email, supportUntil });
    licenses.push({ plan: plan.name, email, key });
  }

  for (const r of RELEASES) {
    const release = await createRelease(deps, actor, product.id, { version: r.version, channel: r.channel, notes: r.notes });
    for (const platform of PLATFORMS) {
      const data = new TextEncoder().encode(`Demo App ${r.version} for ${platform}: a stand-in payload, signed like a real build.\n`);
      const { artifact } = await addArtifact(deps, actor, release.id, {
        platform,
        filename: `demo-app-${r.version}-${platform}.txt`,
        contentType: "text/plain",
        size: data.byteLength,
      });
      // Where the admin's presigned upload would have put it; finalize moves it to the final key.
      await deps.storage.put(stagingKeyFor(artifact.storageKey), data, "text/plain");
      await finalizeArtifact(deps, actor, artifact.id);
    }
    await publishRelease(deps, actor, release.id);
  }

  const { key: adminApiKey } = await createApiKey(deps, actor, { name: "demo admin", scopes: ["admin"], productId: null });
  return { created: true, productId: product.id, slug: DEMO_SLUG, adminApiKey, licenses, releases: RELEASES.map((r) => r.version) };
}

export function describeDemo(s: DemoSummary, baseUrl: string): string {
  const api = `${baseUrl}/api/v1`;
  const pro = s.licenses[0];
  const lines = [
    s.created ? "Demo loaded." : "The demo is already loaded; nothing changed.",
    "",
    `Product: ${s.slug} (${s.productId})`,
    ...(s.adminApiKey ? [`Admin API key (shown once): ${s.adminApiKey}`] : []),
    "Licenses:",
    ...s.licenses.map((l) => `  ${l.plan.padEnd(20)} ${l.key}  (${l.email})`),
    `Releases: ${s.releases.join(", ")} (linux-x64, darwin-arm64, windows-x64; signed)`,
    "",
    "Try it (start the service first: npm start):",
  ];
  if (pro) {
    lines.push(
      `  curl -s ${api}/license/activate -H 'content-type: application/json' -d '{"license_key":"${pro.key}","identifier":"my-laptop"}'`,
      `  curl -s ${api}/license/verify -H 'content-type: application/json' -d '{"license_key":"${pro.key}","identifier":"my-laptop"}'`,
      `  curl -s ${api}/license/entitlements -H 'content-type: application/json' -d '{"license_key":"${pro.key}"}'`,
      `  curl -s ${api}/license/download -H 'content-type: application/json' -d '{"license_key":"${pro.key}","platform":"linux-x64"}'`,
    );
  }
  lines.push(
    `  curl -s '${api}/releases/${s.slug}/feed.xml?platform=darwin-arm64'`,
    `  curl -s '${api}/releases/${s.slug}/feed.json?platform=linux-x64&channel=beta'`,
    `  curl -s '${api}/releases/${s.slug}/upgrade.json?platform=windows-x64'`,
    `  API docs: ${api}/docs`,
  );
  return lines.join("\n");
}
