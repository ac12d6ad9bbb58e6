CREATE TABLE "offline_activations" (
	"id" text PRIMARY KEY NOT NULL,
	"license_id" text NOT NULL,
	"identifier" text NOT NULL,
	"fingerprint" text NOT NULL,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"created_by" text,
	"cleared_at" timestamp with time zone,
	"cleared_by" text
);
--> statement-breakpoint
ALTER TABLE "offline_activations" ADD CONSTRAINT "offline_activations_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "offline_activations_live_uq" ON "offline_activations" USING btree ("license_id") WHERE cleared_at IS NULL;--> statement-breakpoint
CREATE INDEX "offline_activations_license_identifier_idx" ON "offline_activations" USING btree ("license_id","identifier");