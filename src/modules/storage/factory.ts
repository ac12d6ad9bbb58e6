// Chooses the storage driver from config.storage.driver (DECISIONS: Releases and storage).
import type { Config } from "../../config";
import type { Clock } from "../../shared/clock";
import type { Secrets } from "../keys/secrets";
import type { Storage } from "./storage";

export interface StorageDeps {
  config: Readonly<Config>;
  clock: Clock;
  secrets: Secrets;
}

export declare function createStorage(deps: StorageDeps): Storage;
