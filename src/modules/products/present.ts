import type { Product } from "./repo";

export function presentProduct(p: Product) {
  return {
    id: p.id,
    name: p.name,
    slug: p.slug,
    distribution: p.distribution,
    minimum_supported_version: p.minimumSupportedVersion,
    minimum_supported_message: p.minimumSupportedMessage,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}
