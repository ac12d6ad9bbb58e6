// Worker of src/shared/thread-priority.test.ts: lowers itself, reports, then stays alive until terminated.
import { lowerThisThreadPriority } from "../../src/shared/thread-priority";

declare const self: Worker;
self.postMessage(lowerThisThreadPriority());
setInterval(() => {}, 60_000);
