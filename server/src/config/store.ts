import { z } from "zod";
import { group, setting } from "./kit.ts";

// The store: the embedded SQLite file, or MongoDB.

export const storeSettings = group("store", {
  DATA_DIR: setting(
    z.string().min(1).default("./data"),
    "The SQLite file and (development) the generated vault keys; `:memory:` for throwaway runs. A relative path is from the server's folder, whatever the working directory.",
  ),
  MONGODB_URI: setting(
    z.string().min(1).optional(),
    "Unset: the embedded SQLite store under DATA_DIR. Set: MongoDB (a replica set; money changes use transactions).",
  ),
  MONGODB_DB: setting(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,63}$/)
      .default("payments"),
    "The MongoDB database name.",
  ),
});
