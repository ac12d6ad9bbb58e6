import type { FloatingSession } from "./repo";
import type { FloatingView } from "./service";

export const presentSession = (v: FloatingView) => ({
  session_id: v.session.id,
  expires_at: v.session.expiresAt.toISOString(),
  active_sessions: v.active,
  max_sessions: v.max,
});

export const presentCheckin = (v: FloatingView) => ({
  session_id: v.session.id,
  released: true as const,
  active_sessions: v.active,
  max_sessions: v.max,
});

export const presentFloatingSession = (s: FloatingSession) => ({
  session_id: s.id,
  identifier: s.identifier,
  label: s.label,
  created_at: s.createdAt.toISOString(),
  heartbeat_at: s.heartbeatAt.toISOString(),
  expires_at: s.expiresAt.toISOString(),
});
