-- Release version keys sort byte-wise, as on SQLite: the feed and the release list order by
-- version_key and must walk releases_feed_idx instead of sorting a product's whole history. With
-- the database's default collation (en_US and the like) an ORDER BY … COLLATE "C" cannot use the
-- index; declaring the column "C" makes the plain ORDER BY byte-wise and index-backed. The indexes
-- on the column are rebuilt by the type change.
ALTER TABLE "releases" ALTER COLUMN "version_key" TYPE text COLLATE "C";
