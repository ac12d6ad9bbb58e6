DROP INDEX "audit_entity_idx";--> statement-breakpoint
DROP INDEX "audit_product_idx";--> statement-breakpoint
DROP INDEX "audit_created_idx";--> statement-breakpoint
DROP INDEX "outbox_due_idx";--> statement-breakpoint
DROP INDEX "seats_user_idx";--> statement-breakpoint
DROP INDEX "sessions_user_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_endpoint_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_endpoint_due_idx";--> statement-breakpoint
DROP INDEX "meter_queue_due_idx";--> statement-breakpoint
DROP INDEX "payments_license_idx";--> statement-breakpoint
CREATE INDEX "activations_license_created_idx" ON "activations" USING btree ("license_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "audit_entity_type_idx" ON "audit_log" USING btree ("entity_type","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "audit_action_idx" ON "audit_log" USING btree ("action","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "audit_actor_idx" ON "audit_log" USING btree ("actor_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "outbox_kind_created_idx" ON "outbox" USING btree ("kind","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "outbox_kind_status_created_idx" ON "outbox" USING btree ("kind","status","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "outbox_kind_topic_created_idx" ON "outbox" USING btree ("kind","topic","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "outbox_email_to_idx" ON "outbox" USING btree ("kind",lower("payload" ->> 'to' COLLATE "C"),"created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "outbox_event_product_idx" ON "outbox" USING btree ("kind",("payload" -> 'data' ->> 'product_id'),"created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "floating_sessions_expiry_idx" ON "floating_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "seats_license_created_idx" ON "seats" USING btree ("license_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "sessions_created_idx" ON "sessions" USING btree ("created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "sessions_absolute_expiry_idx" ON "sessions" USING btree ("absolute_expires_at");--> statement-breakpoint
CREATE INDEX "sign_in_codes_created_idx" ON "sign_in_codes" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "users_created_idx" ON "users" USING btree ("created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "users_role_idx" ON "users" USING btree ("role","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "users_admins_idx" ON "users" USING btree ("created_at","id" COLLATE "C") WHERE "users"."role" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "offline_activations_license_created_idx" ON "offline_activations" USING btree ("license_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_status_idx" ON "webhook_deliveries" USING btree ("endpoint_id","status","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_type_idx" ON "webhook_deliveries" USING btree ("endpoint_id","event_type","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "audit_entity_idx" ON "audit_log" USING btree ("entity_type","entity_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "audit_product_idx" ON "audit_log" USING btree ("product_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "audit_created_idx" ON "audit_log" USING btree ("created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "outbox_due_idx" ON "outbox" USING btree ("status","next_attempt_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "seats_user_idx" ON "seats" USING btree ("user_id","accepted_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries" USING btree ("endpoint_id","status","next_attempt_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "meter_queue_due_idx" ON "meter_queue" USING btree ("status","next_attempt_at","id");--> statement-breakpoint
CREATE INDEX "payments_license_idx" ON "payments" USING btree ("license_id","paid_at","id" COLLATE "C");