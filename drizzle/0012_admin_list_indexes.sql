DROP INDEX `audit_entity_idx`;--> statement-breakpoint
DROP INDEX `audit_product_idx`;--> statement-breakpoint
DROP INDEX `audit_created_idx`;--> statement-breakpoint
CREATE INDEX `audit_entity_type_idx` ON `audit_log` (`entity_type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_action_idx` ON `audit_log` (`action`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_actor_idx` ON `audit_log` (`actor_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_entity_idx` ON `audit_log` (`entity_type`,`entity_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_product_idx` ON `audit_log` (`product_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_created_idx` ON `audit_log` (`created_at`,`id`);--> statement-breakpoint
DROP INDEX `outbox_due_idx`;--> statement-breakpoint
CREATE INDEX `outbox_kind_created_idx` ON `outbox` (`kind`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `outbox_kind_status_created_idx` ON `outbox` (`kind`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `outbox_kind_topic_created_idx` ON `outbox` (`kind`,`topic`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `outbox_email_to_idx` ON `outbox` (`kind`,lower("payload" ->> '$.to'),`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `outbox_event_product_idx` ON `outbox` (`kind`,("payload" ->> '$.data.product_id'),`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `outbox_due_idx` ON `outbox` (`status`,`next_attempt_at`,`id`);--> statement-breakpoint
DROP INDEX `seats_user_idx`;--> statement-breakpoint
CREATE INDEX `seats_license_created_idx` ON `seats` (`license_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `seats_user_idx` ON `seats` (`user_id`,`accepted_at`,`id`);--> statement-breakpoint
DROP INDEX `sessions_user_idx`;--> statement-breakpoint
CREATE INDEX `sessions_created_idx` ON `sessions` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `sessions_absolute_expiry_idx` ON `sessions` (`absolute_expires_at`);--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`,`created_at`,`id`);--> statement-breakpoint
DROP INDEX `webhook_deliveries_endpoint_idx`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_endpoint_due_idx`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_status_idx` ON `webhook_deliveries` (`endpoint_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_type_idx` ON `webhook_deliveries` (`endpoint_id`,`event_type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_due_idx` ON `webhook_deliveries` (`endpoint_id`,`status`,`next_attempt_at`,`id`);--> statement-breakpoint
DROP INDEX `meter_queue_due_idx`;--> statement-breakpoint
CREATE INDEX `meter_queue_due_idx` ON `meter_queue` (`status`,`next_attempt_at`,`id`);--> statement-breakpoint
DROP INDEX `payments_license_idx`;--> statement-breakpoint
CREATE INDEX `payments_license_idx` ON `payments` (`license_id`,`paid_at`,`id`);--> statement-breakpoint
CREATE INDEX `activations_license_created_idx` ON `activations` (`license_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `floating_sessions_expiry_idx` ON `floating_sessions` (`expires_at`);--> statement-breakpoint
CREATE INDEX `sign_in_codes_created_idx` ON `sign_in_codes` (`created_at`);--> statement-breakpoint
CREATE INDEX `users_created_idx` ON `users` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `users_role_idx` ON `users` (`role`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `users_admins_idx` ON `users` (`created_at`,`id`) WHERE "users"."role" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `offline_activations_license_created_idx` ON `offline_activations` (`license_id`,`created_at`,`id`);