DROP INDEX `licenses_product_idx`;--> statement-breakpoint
DROP INDEX `licenses_plan_idx`;--> statement-breakpoint
DROP INDEX `licenses_status_idx`;--> statement-breakpoint
DROP INDEX `licenses_email_idx`;--> statement-breakpoint
DROP INDEX `licenses_email_lower_idx`;--> statement-breakpoint
DROP INDEX `licenses_ext_customer_idx`;--> statement-breakpoint
CREATE INDEX `licenses_created_idx` ON `licenses` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_product_created_idx` ON `licenses` (`product_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_product_status_created_idx` ON `licenses` (`product_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_plan_created_idx` ON `licenses` (`plan_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_status_created_idx` ON `licenses` (`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_key_hint_idx` ON `licenses` (`key_hint`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_email_domain_idx` ON `licenses` (lower(substr("email", instr("email", '@') + 1)),`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_ext_workspace_idx` ON `licenses` (`external_workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_status_valid_until_idx` ON `licenses` (`status`,`valid_until`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_product_valid_until_idx` ON `licenses` (`product_id`,`valid_until`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_product_status_valid_until_idx` ON `licenses` (`product_id`,`status`,`valid_until`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_email_lower_idx` ON `licenses` (lower("email"),`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `licenses_ext_customer_idx` ON `licenses` (`external_customer_id`,`created_at`,`id`);