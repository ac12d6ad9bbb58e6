CREATE TABLE "addons" (
	"id" text PRIMARY KEY NOT NULL,
	"product_id" text NOT NULL,
	"name" text NOT NULL,
	"feature_name" text NOT NULL,
	"value_type" text NOT NULL,
	"value" text NOT NULL,
	"quota_limit" bigint,
	"quota_period" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plan_features" (
	"id" text PRIMARY KEY NOT NULL,
	"plan_id" text NOT NULL,
	"name" text NOT NULL,
	"value_type" text NOT NULL,
	"value" text NOT NULL,
	"quota_limit" bigint,
	"quota_period" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plans" (
	"id" text PRIMARY KEY NOT NULL,
	"product_id" text NOT NULL,
	"name" text NOT NULL,
	"license_type" text NOT NULL,
	"trial_days" integer DEFAULT 14 NOT NULL,
	"grace_days" integer DEFAULT 0 NOT NULL,
	"max_activations" integer,
	"max_seats" integer,
	"floating" boolean DEFAULT false NOT NULL,
	"floating_timeout" integer DEFAULT 30 NOT NULL,
	"support_days" integer DEFAULT 365 NOT NULL,
	"support_renewal_price_id" text,
	"quota_period" text DEFAULT 'monthly' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "products" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"distribution" text DEFAULT 'open' NOT NULL,
	"minimum_supported_version" text,
	"minimum_supported_message" text,
	"release_generation" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "products_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "activations" (
	"id" text PRIMARY KEY NOT NULL,
	"license_id" text NOT NULL,
	"identifier" text NOT NULL,
	"identifier_type" text DEFAULT 'device' NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "license_addons" (
	"license_id" text NOT NULL,
	"addon_id" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "license_addons_license_id_addon_id_pk" PRIMARY KEY("license_id","addon_id")
);
--> statement-breakpoint
CREATE TABLE "licenses" (
	"id" text PRIMARY KEY NOT NULL,
	"product_id" text NOT NULL,
	"plan_id" text NOT NULL,
	"key_hash" text NOT NULL,
	"key_encrypted" text NOT NULL,
	"key_hint" text NOT NULL,
	"email" text NOT NULL,
	"status" text NOT NULL,
	"prior_status" text,
	"valid_until" timestamp with time zone,
	"support_until" timestamp with time zone,
	"external_customer_id" text,
	"external_workspace_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "licenses_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"product_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"actor_type" text NOT NULL,
	"actor_id" text,
	"action" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" text,
	"product_id" text,
	"changes" jsonb,
	"ip" text,
	"request_id" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"topic" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"sent_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"kid" text NOT NULL,
	"purpose" text NOT NULL,
	"product_id" text,
	"public_key" text NOT NULL,
	"private_key_encrypted" text NOT NULL,
	"key_num" text,
	"active" boolean NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retired_at" timestamp with time zone,
	CONSTRAINT "signing_keys_kid_unique" UNIQUE("kid")
);
--> statement-breakpoint
CREATE TABLE "artifacts" (
	"id" text PRIMARY KEY NOT NULL,
	"release_id" text NOT NULL,
	"platform" text NOT NULL,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"declared_size" bigint NOT NULL,
	"storage_key" text NOT NULL,
	"status" text NOT NULL,
	"sha256" text,
	"file_size" bigint,
	"blake2b512" text,
	"ed_signature" text,
	"minisign_signature" text,
	"signing_kid" text,
	"created_at" timestamp with time zone NOT NULL,
	"finalized_at" timestamp with time zone,
	CONSTRAINT "artifacts_storage_key_unique" UNIQUE("storage_key")
);
--> statement-breakpoint
CREATE TABLE "releases" (
	"id" text PRIMARY KEY NOT NULL,
	"product_id" text NOT NULL,
	"version" text NOT NULL,
	"version_key" text NOT NULL,
	"channel" text NOT NULL,
	"notes" text DEFAULT '' NOT NULL,
	"minimum_os_version" text,
	"status" text NOT NULL,
	"yank_reason" text,
	"published_at" timestamp with time zone,
	"yanked_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_counters" (
	"license_id" text NOT NULL,
	"feature" text NOT NULL,
	"period_key" text NOT NULL,
	"used" bigint NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "usage_counters_license_id_feature_period_key_pk" PRIMARY KEY("license_id","feature","period_key")
);
--> statement-breakpoint
CREATE TABLE "usage_events" (
	"id" text PRIMARY KEY NOT NULL,
	"license_id" text NOT NULL,
	"feature" text NOT NULL,
	"period_key" text NOT NULL,
	"quantity" bigint NOT NULL,
	"metadata" jsonb,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "floating_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"license_id" text NOT NULL,
	"identifier" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"heartbeat_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"key" text NOT NULL,
	"route" text NOT NULL,
	"scope" text NOT NULL,
	"body_hash" text NOT NULL,
	"state" text NOT NULL,
	"response_status" integer,
	"response_sealed" text,
	"created_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "idempotency_keys_key_route_scope_pk" PRIMARY KEY("key","route","scope")
);
--> statement-breakpoint
CREATE TABLE "brute_force_state" (
	"ip" text PRIMARY KEY NOT NULL,
	"fails" integer NOT NULL,
	"window_started_at" timestamp with time zone NOT NULL,
	"level" integer NOT NULL,
	"locked_until" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limit_counters" (
	"key" text NOT NULL,
	"window_start" bigint NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "rate_limit_counters_key_window_start_pk" PRIMARY KEY("key","window_start")
);
--> statement-breakpoint
CREATE TABLE "generations" (
	"name" text PRIMARY KEY NOT NULL,
	"value" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "job_leases" (
	"name" text PRIMARY KEY NOT NULL,
	"owner" text,
	"lease_until" timestamp with time zone,
	"fence" bigint DEFAULT 0 NOT NULL,
	"last_slot_at" timestamp with time zone,
	"last_started_at" timestamp with time zone,
	"last_finished_at" timestamp with time zone,
	"last_result" jsonb
);
--> statement-breakpoint
ALTER TABLE "addons" ADD CONSTRAINT "addons_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_features" ADD CONSTRAINT "plan_features_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plans" ADD CONSTRAINT "plans_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activations" ADD CONSTRAINT "activations_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "license_addons" ADD CONSTRAINT "license_addons_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "license_addons" ADD CONSTRAINT "license_addons_addon_id_addons_id_fk" FOREIGN KEY ("addon_id") REFERENCES "public"."addons"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "licenses" ADD CONSTRAINT "licenses_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "licenses" ADD CONSTRAINT "licenses_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signing_keys" ADD CONSTRAINT "signing_keys_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_release_id_releases_id_fk" FOREIGN KEY ("release_id") REFERENCES "public"."releases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "releases" ADD CONSTRAINT "releases_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_counters" ADD CONSTRAINT "usage_counters_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "floating_sessions" ADD CONSTRAINT "floating_sessions_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "addons_product_name_uq" ON "addons" USING btree ("product_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "plan_features_plan_name_uq" ON "plan_features" USING btree ("plan_id","name");--> statement-breakpoint
CREATE INDEX "plans_product_idx" ON "plans" USING btree ("product_id");--> statement-breakpoint
CREATE UNIQUE INDEX "activations_license_identifier_uq" ON "activations" USING btree ("license_id","identifier");--> statement-breakpoint
CREATE INDEX "licenses_product_idx" ON "licenses" USING btree ("product_id","id");--> statement-breakpoint
CREATE INDEX "licenses_plan_idx" ON "licenses" USING btree ("plan_id");--> statement-breakpoint
CREATE INDEX "licenses_status_idx" ON "licenses" USING btree ("status");--> statement-breakpoint
CREATE INDEX "licenses_email_idx" ON "licenses" USING btree ("email");--> statement-breakpoint
CREATE INDEX "licenses_ext_customer_idx" ON "licenses" USING btree ("external_customer_id");--> statement-breakpoint
CREATE INDEX "audit_entity_idx" ON "audit_log" USING btree ("entity_type","entity_id");--> statement-breakpoint
CREATE INDEX "audit_product_idx" ON "audit_log" USING btree ("product_id");--> statement-breakpoint
CREATE INDEX "audit_created_idx" ON "audit_log" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "outbox_due_idx" ON "outbox" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "signing_keys_purpose_idx" ON "signing_keys" USING btree ("purpose","product_id","active");--> statement-breakpoint
CREATE UNIQUE INDEX "artifacts_release_platform_uq" ON "artifacts" USING btree ("release_id","platform");--> statement-breakpoint
CREATE UNIQUE INDEX "releases_product_version_uq" ON "releases" USING btree ("product_id","version");--> statement-breakpoint
CREATE UNIQUE INDEX "releases_product_version_key_uq" ON "releases" USING btree ("product_id","version_key");--> statement-breakpoint
CREATE INDEX "releases_feed_idx" ON "releases" USING btree ("product_id","status","version_key","channel","published_at");--> statement-breakpoint
CREATE INDEX "usage_events_license_idx" ON "usage_events" USING btree ("license_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "floating_sessions_license_identifier_uq" ON "floating_sessions" USING btree ("license_id","identifier");--> statement-breakpoint
CREATE INDEX "floating_sessions_license_expiry_idx" ON "floating_sessions" USING btree ("license_id","expires_at");--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "brute_force_state_updated_idx" ON "brute_force_state" USING btree ("updated_at");--> statement-breakpoint
CREATE INDEX "rate_limit_counters_window_idx" ON "rate_limit_counters" USING btree ("window_start");