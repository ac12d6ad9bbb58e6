/**
 * The longest identifier, in bytes of UTF-8, that a new activation, floating session or offline
 * activation stores. PostgreSQL indexes (license_id, identifier), and a btree entry holds at most
 * 2704 bytes: an identifier past that failed to insert there (a 500) where SQLite stored it. Applied
 * on both engines to what is created (license-api/access.ts assertStorableIdentifier), never to
 * lookups: an identifier a SQLite deployment stored before (with IDENTIFIER_MAX_LENGTH above 2048)
 * still verifies, deactivates and checks in; `keyward db copy` names such identifiers (db/copy.ts).
 */
export const MAX_STORED_IDENTIFIER_BYTES = 2048;
