CREATE TABLE "billing_links" (
	"license_id" text PRIMARY KEY NOT NULL,
	"stripe_customer_id" text,
	"stripe_subscription_id" text,
	"stripe_checkout_session_id" text,
	"subscription_status" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "meter_queue" (
	"id" text PRIMARY KEY NOT NULL,
	"license_id" text NOT NULL,
	"feature" text NOT NULL,
	"event_name" text NOT NULL,
	"quantity" bigint NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"last_error" text,
	"sent_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" text PRIMARY KEY NOT NULL,
	"license_id" text NOT NULL,
	"kind" text NOT NULL,
	"stripe_checkout_session_id" text,
	"stripe_invoice_id" text,
	"stripe_payment_intent_id" text,
	"amount" bigint,
	"currency" text,
	"paid_at" timestamp with time zone NOT NULL,
	"refund_state" text,
	"stripe_refund_id" text,
	"refunded_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stripe_events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"outcome" text NOT NULL,
	"processed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "plan_features" ADD COLUMN "stripe_meter" text;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "purchase_price_id" text;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "purchase_trial_days" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "portal_offline_activation" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "billing_links" ADD CONSTRAINT "billing_links_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "meter_queue" ADD CONSTRAINT "meter_queue_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_license_id_licenses_id_fk" FOREIGN KEY ("license_id") REFERENCES "public"."licenses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "billing_links_subscription_uq" ON "billing_links" USING btree ("stripe_subscription_id");--> statement-breakpoint
CREATE UNIQUE INDEX "billing_links_checkout_uq" ON "billing_links" USING btree ("stripe_checkout_session_id");--> statement-breakpoint
CREATE INDEX "billing_links_customer_idx" ON "billing_links" USING btree ("stripe_customer_id");--> statement-breakpoint
CREATE INDEX "meter_queue_due_idx" ON "meter_queue" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "meter_queue_license_idx" ON "meter_queue" USING btree ("license_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_checkout_uq" ON "payments" USING btree ("stripe_checkout_session_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_invoice_uq" ON "payments" USING btree ("stripe_invoice_id");--> statement-breakpoint
CREATE INDEX "payments_license_idx" ON "payments" USING btree ("license_id","paid_at");--> statement-breakpoint
CREATE INDEX "stripe_events_processed_idx" ON "stripe_events" USING btree ("processed_at");