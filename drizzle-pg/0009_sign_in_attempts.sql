-- Sign-in codes are keyed by the sign-in attempt (the browser that asked) instead of the address.
-- Codes live 10 minutes: the old rows are dropped, not converted (an old code has no attempt).
DROP TABLE "sign_in_codes";--> statement-breakpoint
CREATE TABLE "sign_in_codes" (
	"attempt_hash" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"code_hash" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sign_in_codes_email_created_idx" ON "sign_in_codes" USING btree ("email","created_at");
