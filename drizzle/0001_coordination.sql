CREATE TABLE `generations` (
	`name` text PRIMARY KEY NOT NULL,
	`value` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `job_leases` (
	`name` text PRIMARY KEY NOT NULL,
	`owner` text,
	`lease_until` integer,
	`fence` integer DEFAULT 0 NOT NULL,
	`last_slot_at` integer,
	`last_started_at` integer,
	`last_finished_at` integer,
	`last_result` text
);
