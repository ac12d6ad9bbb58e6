// When to sign on node:crypto's thread pool instead of on the event loop.
//
// An Ed25519 signature is the largest single piece of a verify (about a quarter of its CPU). Made
// on the event loop it holds up every other request for its duration; made on the thread pool it
// costs a hand-over to another thread and back. Which is better depends on the load:
//   - Requests queued behind this one (several arrived in the same turn of the event loop, or
//     earlier signatures are still on the pool): hand it over. The event loop serves the others
//     meanwhile and a second core signs, so a node's verify throughput is no longer capped by one
//     core (docs/performance.md: +75–80 % at 64 connections on a 2-vCPU machine).
//   - Nothing else waiting: sign in place. A hand-over to an idle pool thread has to wake it, which
//     measured 70–80 µs more latency and half again the CPU per request when requests come one at a time.
// The signal is the event loop's own: a request that is the second to ask within one turn of the
// loop (the first asking schedules the turn's end with setImmediate) or that asks while signatures
// are out on the pool signs off the loop. On a machine with one CPU there is no second core to sign
// on, and every signature stays in place.
import { availableParallelism } from "node:os";

let outstanding = 0;
let turnOpen = false;
const closeTurn = () => {
  turnOpen = false;
};

/** The rule above for a machine with `cores` CPUs: true when a signature should leave the event loop. */
export function offloadRule(cores: number): () => boolean {
  if (cores < 2) return () => false;
  return () => {
    if (outstanding > 0 || turnOpen) return true;
    turnOpen = true;
    setImmediate(closeTurn);
    return false;
  };
}

/** This machine's rule (see above). */
export const offloadSigning: () => boolean = offloadRule(availableParallelism());

/** A signature went to the thread pool; `handedBack` must follow exactly once, when it settles. */
export function handedOver(): void {
  outstanding++;
}

export function handedBack(): void {
  outstanding--;
}

/** Signatures out on the thread pool now (tests). */
export function outstandingSignatures(): number {
  return outstanding;
}
