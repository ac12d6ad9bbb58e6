// The identifier's activation as both engines' one-statement lookups (activate's read) return it:
// its columns beside the license's, all null when the identifier is not activated on the license.
import type { Activation, IdentifierType } from "./repo";
import { msDate } from "../license-api/raw-rows";

export interface RawLookupActivation {
  /** The license's id. */
  id: string;
  activation_id: string | null;
  identifier_type: IdentifierType | null;
  label: string | null;
  /** Epoch milliseconds. */
  created_at: number | null;
  last_seen_at: number | null;
}

export function lookedUpActivation(row: RawLookupActivation, identifier: string): Activation | null {
  if (row.activation_id === null) return null;
  return {
    id: row.activation_id,
    licenseId: row.id,
    identifier,
    identifierType: row.identifier_type!,
    label: row.label,
    createdAt: new Date(row.created_at!),
    lastSeenAt: msDate(row.last_seen_at),
  };
}
