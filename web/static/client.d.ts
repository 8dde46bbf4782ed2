// TypeScript types for waitroom's client.js (served at /.waitroom/client.js,
// these at /.waitroom/client.d.ts). client.js is a plain script: it sets
// window.waitroom (and challenge.js's window.waitroomSolve), so these are
// global declarations. Reference them from your code:
//
//   /// <reference path="./client.d.ts" />
//
// or list the file in tsconfig.json's "files"/"include". docs/client.md
// has examples. TestClientTypes_* keep this file and client.js in step.

declare namespace Waitroom {
  /** Where the visitor stands: the JSON's "state" and the Waitroom-State header. */
  type State =
    | "waiting"
    | "admitted"
    | "paused"
    | "prequeue"
    | "closed"
    | "hold"
    | "none"
    | "left"
    | "challenge"
    | "limited"
    | "full"
    | "identity"
    | "shared";

  /** The proof of work a newcomer does before it gets a ticket. */
  interface Challenge {
    /** SHA-256(prefix + nonce) must start with `bits` zero bits. */
    prefix: string;
    bits: number;
  }

  /**
   * A waiting room's answer (GET of a guarded path with Accept:
   * application/json, /.waitroom/status, /.waitroom/enter). Every field is
   * always present.
   */
  interface Answer {
    room: string;
    state: State;
    /** 1 is next; 0 when unknown. */
    position: number;
    ahead: number;
    behind: number;
    /** Everyone in the line. */
    waiting: number;
    /** The ticket's number; numbers only grow. 0 when unknown. */
    ticket: number;
    /** Seconds until the visitor's turn; null until measured, and while paused. */
    eta_seconds: number | null;
    /** With eta_seconds, a range when the line moves unevenly; else null. */
    eta_max_seconds: number | null;
    /** The room lets nobody in now (mode paused, or max_active 0): no estimate. */
    paused: boolean;
    /** 0 to 1, from where the visitor joined to the front. */
    progress: number;
    /** Seconds to wait before asking again. */
    refresh_after: number;
    /** The ticket for clients without cookies (Waitroom-Token); "" for browsers. */
    token: string;
    /** Where to go once admitted (/.waitroom/status); "" otherwise. */
    next: string;
    /** The operator's notice for the room; "" for none. */
    message: string;
    /** The work to do when state is "challenge"; null otherwise. */
    challenge: Challenge | null;
  }

  /** The answer to a JSON leave. */
  interface Left {
    room: string;
    state: "left";
  }

  interface EnterOptions {
    /** A same-site path the answer's `next` points to once admitted. */
    returnTo?: string;
  }

  /** What onTurn's callback learns besides the answer. */
  interface TurnInfo {
    /** The tab was in the background (document.hidden) when the turn came. */
    hidden: boolean;
  }

  interface AlertOptions {
    /** A short tone (Web Audio, no file), once a click or key press has unlocked audio. Default true. */
    sound?: boolean;
    /** The overlay offers "Notify me when it's my turn". Default true. */
    notify?: boolean;
  }

  /** window.waitroom, as client.js sets it. */
  interface Client {
    /**
     * fetch, but an answer that says the visitor waits (Waitroom-State:
     * waiting, paused, prequeue or hold) shows the waiting overlay, polls
     * as the server hints, and sends the request again, once, when the
     * visitor is in: the promise resolves with that answer. Cancelling the
     * overlay rejects with an AbortError and gives the place up.
     */
    fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
    /**
     * Joins the room's line (POST /.waitroom/enter) and resolves with the
     * admitted answer once the visitor is in, showing the overlay
     * meanwhile. Rejects with an AbortError when the visitor cancels, and
     * with an Error naming the state when the room turns it away (closed,
     * limited, full, identity, shared).
     */
    enter(room: string, opts?: EnterOptions): Promise<Answer>;
    /** Gives the place up, or ends the session (POST /.waitroom/leave, as JSON). */
    leave(room: string): Promise<Response>;
    /**
     * Calls fn when a wait the overlay showed ends with the visitor in
     * (fetch or enter), before their promise resolves; returns a function
     * that removes it. A visitor let in at once never waited: no call.
     */
    onTurn(fn: (answer: Answer, info: TurnInfo) => void): () => void;
    /**
     * Opts the page in to the alerts of a turn that comes while the tab is
     * in the background: a tone, a vibration, a flashing title until the
     * tab is seen again, and a system notification if the visitor opted in
     * (notify). In the foreground nothing is done. Off until called.
     */
    alerts(opts?: AlertOptions): void;
    /**
     * The visitor's opt-in to a notification: asks the browser's
     * permission (call it from a click) and remembers a yes for this
     * origin. Resolves with the browser's answer.
     */
    notify(): Promise<NotificationPermission>;
    /** The client's API version. */
    readonly version: 1;
  }

  /**
   * challenge.js's solver: a nonce such that SHA-256(prefix + nonce) starts
   * with `bits` zero bits. onProgress(attempts, expected) reports the work;
   * an AbortSignal stops it, rejecting with the signal's reason.
   */
  type Solve = (
    prefix: string,
    bits: number,
    onProgress?: ((attempts: number, expected: number) => void) | null,
    signal?: AbortSignal | null,
  ) => Promise<string>;
}

declare var waitroom: Waitroom.Client;
declare var waitroomSolve: Waitroom.Solve;
declare var waitroomSolveJS: Waitroom.Solve;

interface Window {
  waitroom: Waitroom.Client;
  waitroomSolve: Waitroom.Solve;
  waitroomSolveJS: Waitroom.Solve;
}
