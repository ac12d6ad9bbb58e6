// STORAGE_DRIVER=none: releases cannot be uploaded or downloaded; every operation answers
// 503 STORAGE_DISABLED (spec: Error codes), so the rest of the service still runs.
import { AppError } from "../../shared/errors";
import type { Storage } from "./storage";

const disabled = async (): Promise<never> => {
  throw new AppError("STORAGE_DISABLED");
};

export function createDisabledStorage(): Storage {
  return {
    driver: "none",
    presignPut: disabled,
    presignGet: disabled,
    stat: disabled,
    put: disabled,
    read: disabled,
    delete: disabled,
    move: disabled,
    // Readiness: storage that is not configured is not an outage.
    ready: async () => ({ status: "not_configured" }),
  };
}
