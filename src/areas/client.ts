// The client area: what client apps call. The public license API (activate, verify, usage, floating
// seats, entitlements, downloads), the update feeds, the public signing keys, local storage's object
// routes and health. Composed at start: a node answers client apps from its first request.
import type { Deps } from "../deps";
import { API_PREFIX, type Pipeline } from "../http/pipeline";
import { healthRoutes } from "../modules/health";
import { keyRoutes } from "../modules/keys";
import { activationRoutes } from "../modules/activations";
import { entitlementRoutes } from "../modules/entitlements";
import { usageRoutes } from "../modules/usage";
import { floatingRoutes } from "../modules/floating";
import { feedRoutes } from "../modules/feeds";
import { downloadRoutes } from "../modules/downloads";
import { storageRoutes } from "../modules/storage";

export function clientArea(deps: Deps, pipeline: Pipeline) {
  return pipeline.area("keyward/client").group(API_PREFIX, (api) =>
    api
      .use(healthRoutes(deps))
      .use(keyRoutes(deps))
      // The public license API (license_key in the body is the credential).
      .use(activationRoutes(deps))
      .use(entitlementRoutes(deps))
      .use(usageRoutes(deps))
      .use(floatingRoutes(deps))
      .use(feedRoutes(deps))
      .use(downloadRoutes(deps))
      .use(storageRoutes(deps)),
  );
}

export type ClientArea = ReturnType<typeof clientArea>;
