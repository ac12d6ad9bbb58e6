CREATE TABLE `lifecycle_notices` (
	`license_id` text NOT NULL,
	`kind` text NOT NULL,
	`due_for` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`license_id`, `kind`, `due_for`),
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `email_templates` (
	`name` text PRIMARY KEY NOT NULL,
	`subject` text NOT NULL,
	`body` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `licenses` ADD `past_due_since` integer;--> statement-breakpoint
CREATE INDEX `licenses_valid_until_idx` ON `licenses` (`valid_until`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_support_until_idx` ON `licenses` (`support_until`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_past_due_since_idx` ON `licenses` (`past_due_since`,`id`);