CREATE TABLE "lifecycle_watermark" (
	"name" text PRIMARY KEY NOT NULL,
	"passed_at" timestamp with time zone NOT NULL,
	"basis" text NOT NULL
);
--> statement-breakpoint
DROP INDEX "licenses_support_until_idx";--> statement-breakpoint
DROP INDEX "licenses_past_due_since_idx";--> statement-breakpoint
CREATE INDEX "licenses_status_support_until_idx" ON "licenses" USING btree ("status","support_until","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_status_past_due_since_idx" ON "licenses" USING btree ("status","past_due_since","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "licenses_status_updated_idx" ON "licenses" USING btree ("status","updated_at","id" COLLATE "C");--> statement-breakpoint
CREATE INDEX "billing_links_updated_idx" ON "billing_links" USING btree ("updated_at","license_id" COLLATE "C");