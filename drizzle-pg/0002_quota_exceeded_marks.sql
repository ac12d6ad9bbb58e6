CREATE TABLE "quota_exceeded_marks" (
	"license_id" text NOT NULL,
	"feature" text NOT NULL,
	"period_key" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "quota_exceeded_marks_license_id_feature_period_key_pk" PRIMARY KEY("license_id","feature","period_key")
);
--> statement-breakpoint
ALTER TABLE "quota_exceeded_marks" ADD CONSTRAINT "quota_exceeded_marks_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;