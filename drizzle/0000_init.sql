CREATE TABLE `addons` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` text NOT NULL,
	`name` text NOT NULL,
	`feature_name` text NOT NULL,
	`value_type` text NOT NULL,
	`value` text NOT NULL,
	`quota_limit` integer,
	`quota_period` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE restrict
);
--> statement-breakpoint
CREATE UNIQUE INDEX `addons_product_name_uq` ON `addons` (`product_id`,`name`);--> statement-breakpoint
CREATE TABLE `plan_features` (
	`id` text PRIMARY KEY NOT NULL,
	`plan_id` text NOT NULL,
	`name` text NOT NULL,
	`value_type` text NOT NULL,
	`value` text NOT NULL,
	`quota_limit` integer,
	`quota_period` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`plan_id`) REFERENCES `plans`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `plan_features_plan_name_uq` ON `plan_features` (`plan_id`,`name`);--> statement-breakpoint
CREATE TABLE `plans` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` text NOT NULL,
	`name` text NOT NULL,
	`license_type` text NOT NULL,
	`trial_days` integer DEFAULT 14 NOT NULL,
	`grace_days` integer DEFAULT 0 NOT NULL,
	`max_activations` integer,
	`max_seats` integer,
	`floating` integer DEFAULT false NOT NULL,
	`floating_timeout` integer DEFAULT 30 NOT NULL,
	`support_days` integer DEFAULT 365 NOT NULL,
	`support_renewal_price_id` text,
	`quota_period` text DEFAULT 'monthly' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE restrict
);
--> statement-breakpoint
CREATE INDEX `plans_product_idx` ON `plans` (`product_id`);--> statement-breakpoint
CREATE TABLE `products` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`distribution` text DEFAULT 'open' NOT NULL,
	`minimum_supported_version` text,
	`minimum_supported_message` text,
	`release_generation` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `products_slug_unique` ON `products` (`slug`);--> statement-breakpoint
CREATE TABLE `activations` (
	`id` text PRIMARY KEY NOT NULL,
	`license_id` text NOT NULL,
	`identifier` text NOT NULL,
	`identifier_type` text DEFAULT 'device' NOT NULL,
	`label` text,
	`created_at` integer NOT NULL,
	`last_seen_at` integer,
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `activations_license_identifier_uq` ON `activations` (`license_id`,`identifier`);--> statement-breakpoint
CREATE TABLE `license_addons` (
	`license_id` text NOT NULL,
	`addon_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`license_id`, `addon_id`),
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`addon_id`) REFERENCES `addons`(`id`) ON UPDATE no action ON DELETE restrict
);
--> statement-breakpoint
CREATE TABLE `licenses` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` text NOT NULL,
	`plan_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_encrypted` text NOT NULL,
	`key_hint` text NOT NULL,
	`email` text NOT NULL,
	`status` text NOT NULL,
	`prior_status` text,
	`valid_until` integer,
	`support_until` integer,
	`external_customer_id` text,
	`external_workspace_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE restrict,
	FOREIGN KEY (`plan_id`) REFERENCES `plans`(`id`) ON UPDATE no action ON DELETE restrict
);
--> statement-breakpoint
CREATE UNIQUE INDEX `licenses_key_hash_unique` ON `licenses` (`key_hash`);--> statement-breakpoint
CREATE INDEX `licenses_product_idx` ON `licenses` (`product_id`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_plan_idx` ON `licenses` (`plan_id`);--> statement-breakpoint
CREATE INDEX `licenses_status_idx` ON `licenses` (`status`);--> statement-breakpoint
CREATE INDEX `licenses_email_idx` ON `licenses` (`email`);--> statement-breakpoint
CREATE INDEX `licenses_ext_customer_idx` ON `licenses` (`external_customer_id`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`scopes` text NOT NULL,
	`product_id` text,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`actor_type` text NOT NULL,
	`actor_id` text,
	`action` text NOT NULL,
	`entity_type` text NOT NULL,
	`entity_id` text,
	`product_id` text,
	`changes` text,
	`ip` text,
	`request_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_entity_idx` ON `audit_log` (`entity_type`,`entity_id`);--> statement-breakpoint
CREATE INDEX `audit_product_idx` ON `audit_log` (`product_id`);--> statement-breakpoint
CREATE INDEX `audit_created_idx` ON `audit_log` (`created_at`);--> statement-breakpoint
CREATE TABLE `outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`topic` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_error` text,
	`created_at` integer NOT NULL,
	`sent_at` integer
);
--> statement-breakpoint
CREATE INDEX `outbox_due_idx` ON `outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `signing_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`kid` text NOT NULL,
	`purpose` text NOT NULL,
	`product_id` text,
	`public_key` text NOT NULL,
	`private_key_encrypted` text NOT NULL,
	`key_num` text,
	`active` integer NOT NULL,
	`created_at` integer NOT NULL,
	`retired_at` integer,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `signing_keys_kid_unique` ON `signing_keys` (`kid`);--> statement-breakpoint
CREATE INDEX `signing_keys_purpose_idx` ON `signing_keys` (`purpose`,`product_id`,`active`);--> statement-breakpoint
CREATE TABLE `artifacts` (
	`id` text PRIMARY KEY NOT NULL,
	`release_id` text NOT NULL,
	`platform` text NOT NULL,
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`declared_size` integer NOT NULL,
	`storage_key` text NOT NULL,
	`status` text NOT NULL,
	`sha256` text,
	`file_size` integer,
	`blake2b512` text,
	`ed_signature` text,
	`minisign_signature` text,
	`signing_kid` text,
	`created_at` integer NOT NULL,
	`finalized_at` integer,
	FOREIGN KEY (`release_id`) REFERENCES `releases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `artifacts_storage_key_unique` ON `artifacts` (`storage_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `artifacts_release_platform_uq` ON `artifacts` (`release_id`,`platform`);--> statement-breakpoint
CREATE TABLE `releases` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` text NOT NULL,
	`version` text NOT NULL,
	`version_key` text NOT NULL,
	`channel` text NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`minimum_os_version` text,
	`status` text NOT NULL,
	`yank_reason` text,
	`published_at` integer,
	`yanked_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE restrict
);
--> statement-breakpoint
CREATE UNIQUE INDEX `releases_product_version_uq` ON `releases` (`product_id`,`version`);--> statement-breakpoint
CREATE UNIQUE INDEX `releases_product_version_key_uq` ON `releases` (`product_id`,`version_key`);--> statement-breakpoint
CREATE INDEX `releases_feed_idx` ON `releases` (`product_id`,`status`,`version_key`,`channel`,`published_at`);--> statement-breakpoint
CREATE TABLE `usage_counters` (
	`license_id` text NOT NULL,
	`feature` text NOT NULL,
	`period_key` text NOT NULL,
	`used` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`license_id`, `feature`, `period_key`),
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `usage_events` (
	`id` text PRIMARY KEY NOT NULL,
	`license_id` text NOT NULL,
	`feature` text NOT NULL,
	`period_key` text NOT NULL,
	`quantity` integer NOT NULL,
	`metadata` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `usage_events_license_idx` ON `usage_events` (`license_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `floating_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`license_id` text NOT NULL,
	`identifier` text NOT NULL,
	`label` text,
	`created_at` integer NOT NULL,
	`heartbeat_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `floating_sessions_license_identifier_uq` ON `floating_sessions` (`license_id`,`identifier`);--> statement-breakpoint
CREATE INDEX `floating_sessions_license_expiry_idx` ON `floating_sessions` (`license_id`,`expires_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`key` text NOT NULL,
	`route` text NOT NULL,
	`scope` text NOT NULL,
	`body_hash` text NOT NULL,
	`state` text NOT NULL,
	`response_status` integer,
	`response_sealed` text,
	`created_at` integer NOT NULL,
	`completed_at` integer,
	PRIMARY KEY(`key`, `route`, `scope`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created_idx` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `brute_force_state` (
	`ip` text PRIMARY KEY NOT NULL,
	`fails` integer NOT NULL,
	`window_started_at` integer NOT NULL,
	`level` integer NOT NULL,
	`locked_until` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `brute_force_state_updated_idx` ON `brute_force_state` (`updated_at`);--> statement-breakpoint
CREATE TABLE `rate_limit_counters` (
	`key` text NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`key`, `window_start`)
);
--> statement-breakpoint
CREATE INDEX `rate_limit_counters_window_idx` ON `rate_limit_counters` (`window_start`);