import { bool, group, int, setting } from "./kit.ts";

// The developer console and the API reference (docs/console.md "Console and API reference").

export const consoleSettings = group("console", {
  CONSOLE_ENABLED: setting(
    bool.default(true),
    "Whether /console (and its sign-in) is served. The API reference at /docs always is.",
  ),
  CONSOLE_SESSION_TTL_SECONDS: setting(
    int(60, 86400).default(3600),
    "How long a console session lasts from sign-in, in seconds; it is never extended, and ends sooner when its key is revoked, expires or has the signed-in secret rotated out.",
  ),
});
