ALTER TABLE `payments` ADD `dispute_status` text;--> statement-breakpoint
ALTER TABLE `payments` ADD `stripe_dispute_id` text;--> statement-breakpoint
CREATE INDEX `payments_payment_intent_idx` ON `payments` (`stripe_payment_intent_id`);