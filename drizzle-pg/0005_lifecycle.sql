CREATE TABLE "lifecycle_notices" (
	"license_id" text NOT NULL,
	"kind" text NOT NULL,
	"due_for" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "lifecycle_notices_license_id_kind_due_for_pk" PRIMARY KEY("license_id","kind","due_for")
);
--> statement-breakpoint
CREATE TABLE "email_templates" (
	"name" text PRIMARY KEY NOT NULL,
	"subject" text NOT NULL,
	"body" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "licenses" ADD COLUMN "past_due_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "lifecycle_notices" ADD CONSTRAINT "lifecycle_notices_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "licenses_valid_until_idx" ON "licenses" USING btree ("valid_until","id");--> statement-breakpoint
CREATE INDEX "licenses_support_until_idx" ON "licenses" USING btree ("support_until","id");--> statement-breakpoint
CREATE INDEX "licenses_past_due_since_idx" ON "licenses" USING btree ("past_due_since","id");