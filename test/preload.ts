// Loaded before every test file (bunfig.toml): hooks for the whole run.
import { afterAll } from "bun:test";
import { removeTempDirs } from "./helpers/server";

afterAll(() => {
  removeTempDirs();
});
