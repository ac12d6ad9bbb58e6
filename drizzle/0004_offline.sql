CREATE TABLE `offline_activations` (
	`id` text PRIMARY KEY NOT NULL,
	`license_id` text NOT NULL,
	`identifier` text NOT NULL,
	`fingerprint` text NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`created_by` text,
	`cleared_at` integer,
	`cleared_by` text,
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `offline_activations_live_uq` ON `offline_activations` (`license_id`) WHERE cleared_at IS NULL;--> statement-breakpoint
CREATE INDEX `offline_activations_license_identifier_idx` ON `offline_activations` (`license_id`,`identifier`);