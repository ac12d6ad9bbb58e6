CREATE TABLE `quota_exceeded_marks` (
	`license_id` text NOT NULL,
	`feature` text NOT NULL,
	`period_key` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`license_id`, `feature`, `period_key`),
	FOREIGN KEY (`license_id`) REFERENCES `licenses`(`id`) ON UPDATE no action ON DELETE cascade
);
