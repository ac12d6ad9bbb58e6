DROP INDEX "licenses_product_idx";--> statement-breakpoint
DROP INDEX "licenses_plan_idx";--> statement-breakpoint
DROP INDEX "licenses_status_idx";--> statement-breakpoint
DROP INDEX "licenses_email_idx";--> statement-breakpoint
DROP INDEX "licenses_email_lower_idx";--> statement-breakpoint
DROP INDEX "licenses_ext_customer_idx";--> statement-breakpoint
DROP INDEX "licenses_valid_until_idx";--> statement-breakpoint
CREATE INDEX "licenses_created_idx" ON "licenses" USING btree ("created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_product_created_idx" ON "licenses" USING btree ("product_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_product_status_created_idx" ON "licenses" USING btree ("product_id","status","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_plan_created_idx" ON "licenses" USING btree ("plan_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_status_created_idx" ON "licenses" USING btree ("status","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_key_hint_idx" ON "licenses" USING btree ("key_hint","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_email_domain_idx" ON "licenses" USING btree (lower(substr("email", strpos("email", '@') + 1) COLLATE "C"),"created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_ext_workspace_idx" ON "licenses" USING btree ("external_workspace_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_status_valid_until_idx" ON "licenses" USING btree ("status","valid_until","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_product_valid_until_idx" ON "licenses" USING btree ("product_id","valid_until","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_product_status_valid_until_idx" ON "licenses" USING btree ("product_id","status","valid_until","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_email_lower_idx" ON "licenses" USING btree (lower("email" COLLATE "C"),"created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_ext_customer_idx" ON "licenses" USING btree ("external_customer_id","created_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_valid_until_idx" ON "licenses" USING btree ("valid_until","id" COLLATE "C");--> statement-breakpoint
CREATE STATISTICS "licenses_scope_stats" (dependencies) ON "product_id", "plan_id", "external_customer_id", "external_workspace_id" FROM "licenses";