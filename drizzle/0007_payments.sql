CREATE TABLE `billing_links` (
	`license_id` text PRIMARY KEY NOT NULL,
	`stripe_customer_id` text,
	`stripe_subscription_id` text,
	`stripe_checkout_session_id` text,
	`subscription_status` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_links_subscription_uq` ON `billing_links` (`stripe_subscription_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `billing_links_checkout_uq` ON `billing_links` (`stripe_checkout_session_id`);--> statement-breakpoint
CREATE INDEX `billing_links_customer_idx` ON `billing_links` (`stripe_customer_id`);--> statement-breakpoint
CREATE TABLE `meter_queue` (
	`id` text PRIMARY KEY NOT NULL,
	`license_id` text NOT NULL,
	`feature` text NOT NULL,
	`event_name` text NOT NULL,
	`quantity` integer NOT NULL,
	`occurred_at` integer NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_error` text,
	`sent_at` integer,
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `meter_queue_due_idx` ON `meter_queue` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `meter_queue_license_idx` ON `meter_queue` (`license_id`);--> statement-breakpoint
CREATE TABLE `payments` (
	`id` text PRIMARY KEY NOT NULL,
	`license_id` text NOT NULL,
	`kind` text NOT NULL,
	`stripe_checkout_session_id` text,
	`stripe_invoice_id` text,
	`stripe_payment_intent_id` text,
	`amount` integer,
	`currency` text,
	`paid_at` integer NOT NULL,
	`refund_state` text,
	`stripe_refund_id` text,
	`refunded_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payments_checkout_uq` ON `payments` (`stripe_checkout_session_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `payments_invoice_uq` ON `payments` (`stripe_invoice_id`);--> statement-breakpoint
CREATE INDEX `payments_license_idx` ON `payments` (`license_id`,`paid_at`);--> statement-breakpoint
CREATE TABLE `stripe_events` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`outcome` text NOT NULL,
	`processed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `stripe_events_processed_idx` ON `stripe_events` (`processed_at`);--> statement-breakpoint
ALTER TABLE `plan_features` ADD `stripe_meter` text;--> statement-breakpoint
ALTER TABLE `plans` ADD `purchase_price_id` text;--> statement-breakpoint
ALTER TABLE `plans` ADD `purchase_trial_days` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `plans` ADD `portal_offline_activation` integer DEFAULT true NOT NULL;